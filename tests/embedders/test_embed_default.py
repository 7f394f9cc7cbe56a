"""The default embedder, all-MiniLM-L6-v2 int8, run for real on onnxruntime."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers.threads import run_threads
from trove.embedders.default import (
    MODEL_FILE,
    VOCAB_FILE,
    MiniLMEmbedder,
    PinnedFile,
    length_sorted_batches,
    load_tokenizer,
)
from trove.errors import EmbedderError

pytestmark = pytest.mark.slow

# Lengths from one word to past the 256-token truncation, deliberately out of order.
MIXED = [
    "A considerably longer sentence about the migration of arctic terns. " * 12,
    "tern",
    "Cells divide by mitosis.",
    "Protein folding " * 200,
    "",
    "The quick brown fox jumps over the lazy dog, twice, while nobody watches it.",
]


def test_shape_dtype_and_unit_rows(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(MIXED)
    assert vectors.shape == (len(MIXED), 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_no_texts_gives_no_rows(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


def test_a_text_embeds_the_same_alone_and_in_a_mixed_batch(
    minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small budget splits MIXED into several length-sorted batches
    monkeypatch.setattr(minilm, "batch_tokens", 600)
    together = minilm.embed(MIXED)
    alone = np.stack([minilm.embed([text])[0] for text in MIXED])
    assert np.abs(together - alone).max() < 1e-5


def test_embed_query_is_the_row_of_embed(minilm: MiniLMEmbedder) -> None:
    query = minilm.embed_query("how do arctic terns migrate")
    assert query.shape == (384,)
    assert np.allclose(query, minilm.embed(["how do arctic terns migrate"])[0], atol=1e-6)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    a, paraphrase, unrelated = minilm.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Interest rates rose by half a percent this quarter.",
        ]
    )
    assert a @ paraphrase > 0.5
    assert a @ paraphrase > a @ unrelated + 0.3


def test_empty_and_huge_texts_embed(minilm: MiniLMEmbedder) -> None:
    huge = "Lorem ipsum dolor sit amet. " * 3700  # about 100 KB
    assert len(huge) > 100_000
    vectors = minilm.embed(["", huge])
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # truncation at 256 tokens: the rest of a long text cannot change its vector
    assert np.allclose(vectors[1], minilm.embed_query(huge[:3000]), atol=1e-5)


def test_tokenizer_matches_bert_base_uncased_ids() -> None:
    tokenizer = load_tokenizer(VOCAB_FILE.locate())
    assert tokenizer.encode("hello").ids == [101, 7592, 102]
    assert tokenizer.encode("Hello, World!").ids == [101, 7592, 1010, 2088, 999, 102]
    assert tokenizer.encode("Café").ids == [101, 7668, 102]  # lowercased, accent stripped
    long = tokenizer.encode("word " * 1000).ids
    assert len(long) == 256
    assert long[-1] == 102


def test_batches_are_length_sorted_and_within_budget() -> None:
    lengths = [50, 3, 40, 3, 200, 10]
    batches = list(length_sorted_batches(lengths, batch_tokens=100))
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(lengths)
    for batch in batches:
        # a text longer than the budget still gets a batch of its own
        assert len(batch) == 1 or max(lengths[i] for i in batch) * len(batch) <= 100


@pytest.mark.parametrize("pinned", [MODEL_FILE, VOCAB_FILE], ids=["model", "vocab"])
def test_a_corrupt_file_is_refused(pinned: PinnedFile, tmp_path: Path) -> None:
    copy = tmp_path / Path(pinned.path).name
    shutil.copyfile(pinned.locate(), copy)
    with copy.open("r+b") as handle:
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    if pinned is MODEL_FILE:
        embedder = MiniLMEmbedder(model_path=copy)
    else:
        embedder = MiniLMEmbedder(vocab_path=copy)
    with pytest.raises(EmbedderError, match=f"{copy.name} is corrupt.*expected {pinned.sha256}"):
        embedder.embed(["anything"])


def test_a_missing_file_is_an_embedder_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="cannot read"):
        MiniLMEmbedder(model_path=tmp_path / "gone.onnx").embed(["anything"])


def test_a_missing_package_says_to_reinstall() -> None:
    missing = PinnedFile("trove-no-such-distribution", "model.onnx", "0" * 64)
    with pytest.raises(EmbedderError, match=r"not installed: reinstall trove"):
        missing.locate()


def test_threads_share_one_lazy_load() -> None:
    embedder = MiniLMEmbedder(threads=1)

    def work(i: int) -> tuple[np.ndarray, object]:
        return embedder.embed(["shared model"]), embedder.load()

    results, loads = zip(*run_threads(work, 4), strict=True)
    assert len(results) == 4
    assert all(loaded is loads[0] for loaded in loads)
    assert all(np.allclose(result, results[0], atol=1e-6) for result in results)
