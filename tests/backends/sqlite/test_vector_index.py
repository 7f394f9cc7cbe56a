"""VectorIndex: exactness, recall, upserts, removal, filters, threads."""

from __future__ import annotations

import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trove.backends.sqlite.vector_index import index as vectors
from trove.backends.sqlite.vector_index import sketches
from trove.backends.sqlite.vector_index.index import VectorIndex
from trove.errors import InvalidInput


def clustered(n: int, dim: int = 384, clusters: int = 300, seed: int = 0) -> np.ndarray:
    """Unit vectors shaped like sentence embeddings: clustered, anisotropic, off-centre.

    A shared mean direction (embeddings of one model share one), a few hundred cluster
    centres of Zipf-like popularity, and per-dimension scales that fall off as a power
    law, for centres and spread alike. Uniform random unit vectors would be no test:
    isotropic (the sign sketch's best case) and without near neighbours (all near-ties).
    """
    rng = np.random.default_rng(seed)
    scale = rng.permutation((1.0 + np.arange(dim)) ** -0.5)
    scale /= np.sqrt((scale**2).mean() * dim)
    mean = rng.standard_normal(dim)
    mean /= np.linalg.norm(mean)
    centres = rng.standard_normal((clusters, dim)) * scale + 0.35 * mean
    weights = 1.0 / (1.0 + np.arange(clusters)) ** 0.8
    members = rng.choice(clusters, size=n, p=weights / weights.sum())
    x = centres[members] + 0.7 * rng.standard_normal((n, dim)) * scale
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def perturbed(x: np.ndarray, seed: int = 1) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(x.shape) * 0.5 / np.sqrt(x.shape[1])
    q = x + noise.astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def exact(ids: np.ndarray, x: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    return ids[np.argsort(-(x @ query), kind="stable")[:k]]


@pytest.fixture
def sketch_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the sketch path from 100 eligible rows on, so small tests exercise it."""
    monkeypatch.setattr(vectors, "_EXACT_MAX", 100)
    monkeypatch.setattr(vectors, "_OVERSAMPLE", 5)
    monkeypatch.setattr(sketches, "SCAN", 1_000)  # sketches compared a block at a time


def test_exact_below_threshold_matches_brute_force() -> None:
    x = clustered(2_000, dim=64, seed=2)
    ids = np.arange(2_000, dtype=np.int64) * 7
    index = VectorIndex(64)
    index.add(ids, x)
    assert len(index) <= vectors._EXACT_MAX  # every row is scored
    for query in perturbed(x[:20]):
        got, scores = index.search(query, 10)
        assert got.tolist() == exact(ids, x, query, 10).tolist()
        np.testing.assert_allclose(scores, np.sort(x @ query)[::-1][:10], atol=1e-4)
        assert got.dtype == np.int64 and scores.dtype == np.float32


def test_recall_at_10_on_50k_clustered_vectors() -> None:
    x = clustered(50_200, seed=3)
    x, queries = x[:50_000], perturbed(x[50_000:])
    ids = np.arange(1, 50_001, dtype=np.int64)
    index = VectorIndex(384)
    index.add(ids, x)
    assert len(index) > vectors._EXACT_MAX  # the sketch is in play
    truth = np.argpartition(-(x @ queries.T), 10, axis=0)[:10].T + 1
    hits = sum(
        len(np.intersect1d(index.search(q, 10)[0], t)) for q, t in zip(queries, truth, strict=True)
    )
    assert hits / (10 * len(queries)) >= 0.95


def test_add_upserts_and_last_duplicate_wins() -> None:
    x = clustered(300, dim=32, seed=4)
    index = VectorIndex(32)
    index.add(np.arange(100), x[:100])
    index.add(np.array([5, 200, 5]), x[[100, 101, 102]])
    assert len(index) == 101
    got, scores = index.search(x[102], 1)
    assert got.tolist() == [5] and scores[0] == pytest.approx(1.0, abs=1e-4)
    assert 5 not in index.search(x[5], 3)[0].tolist()  # the old vector is gone


def test_ids_in_any_order(sketch_always: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "_MIN_RECENT", 64)  # merge out-of-order ids often
    x = clustered(3_000, dim=32, seed=5)
    ids = np.random.default_rng(0).permutation(10_000)[:3_000].astype(np.int64)
    index = VectorIndex(32)
    for start in range(0, 3_000, 7):
        index.add(ids[start : start + 7], x[start : start + 7])
    assert len(index) == 3_000
    assert all(index.contains(int(i)) for i in ids[::50])
    assert not index.contains(10_001)
    for row in (0, 1_500, 2_999):
        assert index.search(x[row], 1)[0].tolist() == [ids[row]]


@pytest.mark.parametrize("removed_share", [0.1, 0.8])  # masked in place / compacted
def test_removed_ids_never_come_back(sketch_always: None, removed_share: float) -> None:
    x = clustered(3_000, dim=48, seed=6)
    ids = np.arange(3_000, dtype=np.int64) + 10
    index = VectorIndex(48)
    index.add(ids, x)
    gone = ids[: int(3_000 * removed_share)]
    index.remove([*gone.tolist(), 99_999])  # unknown ids are ignored
    index.remove(iter([int(gone[0])]))
    assert len(index) == 3_000 - len(gone)
    for query in perturbed(x[:30]):
        got, _ = index.search(query, 10)
        assert len(got) == 10 and not np.isin(got, gone).any()
    index.add(gone[:1], x[:1])  # a removed id can come back
    assert index.search(x[0], 1)[0].tolist() == [gone[0]]


@pytest.mark.parametrize("allowed_count", [3, 40, 2_500])
def test_candidates_filter_inside_the_search(sketch_always: None, allowed_count: int) -> None:
    x = clustered(5_000, dim=64, seed=7)
    ids = np.arange(5_000, dtype=np.int64)
    index = VectorIndex(64)
    index.add(ids, x)
    index.remove([1, 2])
    allowed = np.random.default_rng(1).choice(5_000, allowed_count, replace=False)
    allowed = np.concatenate([allowed, [1, 2, 123_456]])  # removed and unknown: ignored
    live_allowed = np.setdiff1d(allowed, [1, 2, 123_456])
    for query in perturbed(x[:10]):
        got, _ = index.search(query, 10, candidates=allowed)
        assert len(got) == min(10, len(live_allowed))
        assert np.isin(got, live_allowed).all()
        if len(live_allowed) <= vectors._EXACT_MAX:  # scored exactly
            assert got.tolist() == exact(live_allowed, x[live_allowed], query, 10).tolist()
    assert len(index.search(x[0], 10, candidates=np.array([], np.int64))[0]) == 0


def test_zero_query_and_zero_rows() -> None:
    x = clustered(50, dim=16, seed=8)
    x[3] = 0.0
    index = VectorIndex(16)
    index.add(np.arange(50), x)
    got, scores = index.search(np.zeros(16, np.float32), 5)
    assert len(got) == 5 and not np.isnan(scores).any() and (scores == 0).all()
    got, scores = index.search(x[3], 50)
    assert not np.isnan(scores).any()


def test_empty_and_degenerate_requests() -> None:
    index = VectorIndex(8)
    assert [len(a) for a in index.search(np.ones(8, np.float32), 5)] == [0, 0]
    index.add(np.array([1]), np.ones((1, 8), np.float32) / np.sqrt(8))
    assert [len(a) for a in index.search(np.ones(8, np.float32), 0)] == [0, 0]
    assert [len(a) for a in index.search(np.ones(8, np.float32), -3)] == [0, 0]
    index.add(np.array([], np.int64), np.zeros((0, 8), np.float32))
    index.clear()
    assert len(index) == 0 and not index.contains(1)


@pytest.mark.parametrize(
    ("ids", "rows", "message"),
    [
        ([1], np.zeros((1, 7), np.float32), r"shape \(n, 8\)"),
        ([1], np.zeros(8, np.float32), r"shape \(n, 8\)"),
        ([1, 2], np.zeros((1, 8), np.float32), "2 ids but 1 vectors"),
        ([1], np.full((1, 8), np.nan, np.float32), "NaN"),
        ([1.5], np.zeros((1, 8), np.float32), "integers"),
    ],
)
def test_bad_input_is_rejected(ids: list[float], rows: np.ndarray, message: str) -> None:
    index = VectorIndex(8)
    with pytest.raises(InvalidInput, match=message):
        index.add(np.array(ids), rows)
    assert len(index) == 0


def test_bad_query_is_rejected() -> None:
    index = VectorIndex(8)
    with pytest.raises(InvalidInput, match=r"shape \(8,\)"):
        index.search(np.zeros(9, np.float32), 3)
    with pytest.raises(InvalidInput, match="NaN"):
        index.search(np.full(8, np.nan, np.float32), 3)
    with pytest.raises(InvalidInput):
        VectorIndex(0)


def test_searches_during_writes(sketch_always: None) -> None:
    x = clustered(4_000, dim=32, seed=9)
    index = VectorIndex(32)
    index.add(np.arange(2_000), x[:2_000])
    ever_added = set(range(4_000))
    errors: list[BaseException] = []
    searches: list[int] = []
    done = threading.Event()

    def search() -> None:
        rng = np.random.default_rng()
        try:
            while not done.is_set():
                got, scores = index.search(x[rng.integers(4_000)], 10)
                assert set(got.tolist()) <= ever_added and len(set(got.tolist())) == len(got)
                assert (np.diff(scores) <= 0).all()
                searches.append(1)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for start in range(2_000, 4_000, 20):
        index.add(np.arange(start, start + 20), x[start : start + 20])
        index.remove(np.arange(start - 2_000, start - 1_980))
    done.set()
    for thread in threads:
        thread.join()
    assert not errors and searches
    assert len(index) == 2_000
    got, _ = index.search(x[3_999], 10)
    assert len(got) == 10 and (got >= 2_000).all()


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 300),
    k=st.integers(1, 30),
    seed=st.integers(0, 2**16),
    removed=st.integers(0, 100),
    filtered=st.booleans(),
)
def test_results_sorted_unique_and_live(
    n: int, k: int, seed: int, removed: int, filtered: bool
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 12)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = rng.choice(10 * n + 1, n, replace=False).astype(np.int64)
    index = VectorIndex(12)
    index.add(ids, x)
    index.remove(ids[:removed])
    live = ids[removed:]
    allowed = rng.choice(ids, n // 2, replace=False) if filtered and n else None
    got, scores = index.search(rng.standard_normal(12).astype(np.float32), k, allowed)
    eligible = live if allowed is None else np.intersect1d(live, allowed)
    assert len(got) == min(k, len(eligible))
    assert len(set(got.tolist())) == len(got) and np.isin(got, eligible).all()
    assert (np.diff(scores) <= 0).all() and (np.abs(scores) <= 1.0 + 1e-3).all()


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 40), max_size=12)), max_size=30),
    seed=st.integers(0, 2**16),
)
def test_agrees_with_a_dict_of_vectors(ops: list[tuple[bool, list[int]]], seed: int) -> None:
    """Random upserts and removals, with compaction and merging made frequent."""
    rng = np.random.default_rng(seed)
    index = VectorIndex(8)
    model: dict[int, np.ndarray] = {}
    with mock.patch.multiple(vectors, _MIN_DEAD=3, _MIN_RECENT=2):
        for is_add, ids in ops:
            if is_add:
                rows = rng.standard_normal((len(ids), 8)).astype(np.float32)
                rows /= np.linalg.norm(rows, axis=1, keepdims=True)
                index.add(np.array(ids, np.int64), rows)
                model.update(zip(ids, rows, strict=True))
            else:
                index.remove(ids)
                for i in ids:
                    model.pop(i, None)
    assert len(index) == len(model)
    assert [index.contains(i) for i in range(41)] == [i in model for i in range(41)]
    query = rng.standard_normal(8).astype(np.float32)
    query /= np.linalg.norm(query)
    allowed = np.arange(0, 41, 2)
    for candidates in (None, allowed):
        got, scores = index.search(query, 5, candidates)
        live = [i for i in model if candidates is None or i in allowed]
        want = sorted((float(model[i] @ query) for i in live), reverse=True)[:5]
        np.testing.assert_allclose(scores, want, atol=1e-4)
        for i, score in zip(got.tolist(), scores.tolist(), strict=True):
            assert score == pytest.approx(float(model[i] @ query), abs=1e-4)


@pytest.mark.parametrize("count", [1, 500, 7_812, 60_000])
def test_smallest_distances_from_a_sampled_cut(count: int) -> None:
    # Over many rows the cut is estimated from a sample; the rows kept must still be
    # exactly ``count`` of the smallest (ties at the cut taken arbitrarily).
    distances = np.random.default_rng(count).binomial(384, 0.4, 300_000).astype(np.uint16)
    distances[::97] = 385  # dead rows
    got = sketches.smallest(distances, count, 384)
    assert len(got) == count and np.all(np.diff(got) > 0)
    kth = np.sort(distances)[count - 1]
    assert distances[got].max() == kth
    assert np.count_nonzero(distances[got] < kth) == np.count_nonzero(distances < kth)


@pytest.mark.parametrize("n", [3_000, 70_000])
def test_smallest_of_many_rows_at_once_equals_each_alone(n: int) -> None:
    rng = np.random.default_rng(n)
    distances = rng.binomial(64, 0.4, (4, n)).astype(np.uint16)  # many ties at each cut
    distances[:, ::53] = 65  # dead rows
    counts = [1, 500, n // 3, n]
    batched = sketches.smallest_many(distances, counts, 64)
    for row, count, got in zip(distances, counts, batched, strict=True):
        assert np.array_equal(got, sketches.smallest(row, count, 64))
