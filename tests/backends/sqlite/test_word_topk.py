"""The word index's pruned top k (MaxScore) gives exactly the full scoring's ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import trove
from trove.backends.sqlite.word_index import fts as keyword
from trove.backends.sqlite.word_index import maxscore as word_topk
from trove.search.query import parse


def split(data: bytes) -> list[str]:
    return data.decode().split()


def corpus(rows: int, seed: int) -> list[tuple[int, str]]:
    """Texts over a Zipf vocabulary: a few words in most rows, most words in few."""
    rng = np.random.default_rng(seed)
    texts = []
    for i in range(rows):
        words = rng.zipf(1.3, int(rng.integers(3, 60))) % 2_000
        texts.append((10 + 3 * i, " ".join(f"w{w}" for w in words)))
    return texts


@pytest.fixture(scope="module")
def index() -> keyword.WordIndex:
    built = keyword.WordIndex(split)
    chunks = corpus(4_000, 7)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyword, "SEGMENT_ROWS", 700)  # several segments, as at 1M chunks
        for start in range(0, len(chunks), 350):
            built.add(chunks[start : start + 350])
    return built


def queries(seed: int, count: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(count):
        words = [f"w{w}" for w in rng.zipf(1.2, int(rng.integers(1, 12))) % 3_000]
        found.append(words)
    return [*found, ["w1", "w1", "w2"], ["w0"], ["nothing"], ["w1", "nothing", "w5"]]


def assert_same(index: keyword.WordIndex, words: list[str]) -> None:
    full = index.ranker(words)
    pruned = word_topk.ranker(index, words)
    assert full is not None and pruned is not None
    for window in (1, 3, 10, 50, 300, 5_000):
        assert pruned(window) == full(window), (words, window)  # ids, bits, order


def test_same_ranking_as_scoring_every_posting(
    index: keyword.WordIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(index._segments) > 3
    pruned = []
    survivors = word_topk._survivors
    monkeypatch.setattr(word_topk, "_survivors", lambda *a: pruned.append(1) or survivors(*a))
    for words in queries(11, 150):
        assert_same(index, words)
    assert len(pruned) > 100  # the pruned path is the one tested


def test_same_ranking_with_deleted_rows() -> None:
    index = keyword.WordIndex(split)
    chunks = corpus(3_000, 8)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyword, "SEGMENT_ROWS", 500)
        for start in range(0, len(chunks), 500):
            index.add(chunks[start : start + 500])
    ids = [cid for cid, _ in chunks]
    index.remove(ids[::40])  # a few dead rows: their postings leave the idf and the top
    for words in queries(12, 60):
        assert_same(index, words)
    index.remove(ids[::5])  # many: every posting is scored
    for words in queries(13, 20):
        assert_same(index, words)


def test_terms_kept_between_queries_follow_the_index_as_it_changes() -> None:
    index = keyword.WordIndex(split)
    chunks = corpus(2_000, 15)
    index.add(chunks[:1_500])
    asked = queries(16, 40)
    for words in asked:  # each term's postings, count and largest frequency now kept
        assert_same(index, words)
    # New rows: new postings of the same terms, and frequencies past their largest.
    index.add([*chunks[1_500:], (99_999, " ".join(["w1"] * 50 + ["w3"] * 40))])
    for words in asked:
        assert_same(index, words)
    index.remove([cid for cid, _ in chunks[::60]])  # fewer live postings
    for words in asked:
        assert_same(index, words)


def test_ties_at_the_window_edge() -> None:
    index = keyword.WordIndex(split)
    index.add([(i, "graph vector note") for i in range(1, 41)])
    index.add([(100 + i, "graph graph vector index") for i in range(3)])
    for words in (["graph", "vector", "index"], ["note"], ["graph", "graph"]):
        assert_same(index, words)


def test_a_phrase_goes_to_fts5() -> None:
    index = keyword.WordIndex(split)
    index.add([(1, "foo bar")])
    assert word_topk.ranker(index, ["foo bar"]) is None


def test_a_large_store_ranks_by_maxscore_as_fts5_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(word_topk, "MIN_ROWS", 0)  # as a store past 250k chunks
    with trove.open(tmp_path / "s.db", embedder=None) as kb:
        kb.add_many({"text": text} for _, text in corpus(600, 9))
        kb.warm()
        for words in queries(14, 30):
            parsed = parse(" ".join(words))
            ranker = kb.backend._word_ranker(parsed)  # type: ignore[attr-defined]
            match = keyword.word_match(parsed)
            assert ranker is not None and match is not None
            for window in (5, 50):
                fts = kb.backend._fts_ranked("chunk_fts", match, window)  # type: ignore[attr-defined]
                assert ranker(window) == fts
