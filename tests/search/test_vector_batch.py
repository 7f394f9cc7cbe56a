"""Several queries in one pass of the vector index (search_many): each query's results
are exactly what a search of that query alone gives, on every path a search takes."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import trove
from trove.backends.sqlite.vector_index.exact import ExactScan
from trove.errors import InvalidInput
from trove.search import vectors
from trove.search.filters import Filters
from trove.search.vectors import VectorIndex

KS = [10, 0, 1, 200, 37, 5_000]


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("sketch", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_results_equal_separate_searches(
    monkeypatch: pytest.MonkeyPatch, sketch: bool, seed: int
) -> None:
    if sketch:  # the nearest-sketch path from 100 eligible rows on
        monkeypatch.setattr(vectors, "_EXACT_MAX", 100)
        monkeypatch.setattr(vectors, "_OVERSAMPLE", 5)
    rng = np.random.default_rng(seed)
    x = _unit(rng.standard_normal((3_000, 48)))
    index = VectorIndex(48)
    index.add(np.arange(1, 3_001), x)
    index.remove(rng.choice(np.arange(1, 3_001), 400, replace=False))
    near = x[rng.choice(3_000, 3)] + 0.1 * rng.standard_normal((3, 48))
    queries = np.vstack([near, rng.standard_normal((3, 48))]).astype(np.float32)
    queries[1] *= 7.0  # not unit length: normalized as search normalizes
    batched = index.search_many(queries, KS)
    assert len(batched) == len(KS)
    for query, k, (ids, scores) in zip(queries, KS, batched, strict=True):
        alone_ids, alone_scores = index.search(query, k)
        assert np.array_equal(ids, alone_ids)
        assert np.array_equal(scores, alone_scores)
        assert len(ids) == min(k, len(index))


def test_batched_search_rejects_bad_queries() -> None:
    index = VectorIndex(4)
    index.add(np.arange(1, 4), np.eye(4, dtype=np.float32)[:3])
    with pytest.raises(InvalidInput):
        index.search_many(np.ones((2, 4), np.float32), [5])  # two queries, one k
    with pytest.raises(InvalidInput):
        index.search_many(np.ones((1, 3), np.float32), [5])  # wrong dimension
    with pytest.raises(InvalidInput):
        index.search_many(np.full((1, 4), np.nan, np.float32), [5])


def _store(path: Path | str, count: int) -> trove.Store:
    kb = trove.open(path, embedder="hash:32")
    rng = np.random.default_rng(3)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "golf", "hotel", "kilo", "lima"]
    kb.add_many([{"text": " ".join(rng.choice(words, 5)) + f" item{i}"} for i in range(count)])
    return kb


def _same_as_alone(kb: trove.Store, queries: np.ndarray, limits: list[int]) -> None:
    backend, lock, where = kb.backend, kb.backend.vector_lock(), Filters.build()
    stamp = time.time()
    batched = backend.vector_search_many(lock, queries, where, limits, stamp)
    for query, limit, hits in zip(queries, limits, batched, strict=True):
        alone = backend.vector_search(lock, query, where, limit, stamp)
        assert [(h.doc_id, h.chunk_id) for h in hits] == [(h.doc_id, h.chunk_id) for h in alone]
        assert [h.score for h in hits] == pytest.approx([h.score for h in alone], abs=1e-6)


@pytest.mark.parametrize("target", ["memory", "file"])
def test_store_batched_vector_search_equals_separate(tmp_path: Path, target: str) -> None:
    path = ":memory:" if target == "memory" else tmp_path / "kb.db"
    kb = _store(path, 300)
    rng = np.random.default_rng(4)
    lock = kb.backend.vector_lock()
    assert lock is not None
    queries = _unit(rng.standard_normal((4, lock.dimension)))
    limits = [50, 10, 0, 10]
    kb.warm()  # (the exact scan, before: test_exact_scan_reads_the_rows_once...)
    _same_as_alone(kb, queries, limits)  # the loaded (or mapped) index
    kb.add_many([{"text": f"alpha bravo later {i}"} for i in range(30)])
    _same_as_alone(kb, queries, limits)  # and rows added since (a cache's overlay)
    kb.close()


def test_exact_scan_reads_the_rows_once_for_every_query(tmp_path: Path) -> None:
    kb = _store(tmp_path / "kb.db", 200)
    lock = kb.backend.vector_lock()
    assert lock is not None
    scan = ExactScan(kb.backend, lock.table)  # type: ignore[arg-type]
    queries = _unit(np.random.default_rng(5).standard_normal((3, lock.dimension)))
    for candidates in (None, np.arange(1, 120, 3)):
        batched = scan.search_many(queries, [5, 0, 500], candidates)
        for query, k, (ids, scores) in zip(queries, [5, 0, 500], batched, strict=True):
            alone_ids, alone_scores = scan.search(query, k, candidates)
            assert np.array_equal(ids, alone_ids)
            assert np.allclose(scores, alone_scores, atol=1e-6)
    kb.close()
