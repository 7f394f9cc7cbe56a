"""Fusion of two retrievers' ranked documents (trove.search.fusion.fuse), directly:
convex z-scores, reciprocal rank, a single list, ties, weights of zero, limits."""

from __future__ import annotations

import pytest

from trove.models import Chunk, ChunkHit
from trove.search.fusion import RRF_K, fuse


def hits(*scored: tuple[str, float], chunk_id: int = 0) -> list[ChunkHit]:
    """Hits, best first: (doc id, score) pairs."""
    return [ChunkHit(doc, chunk_id, score, Chunk(chunk_id, 0, 1)) for doc, score in scored]


# keyword: a (z = +1), b (z = -1); vector: b (z = +1), c (z = -1)
LISTS = {
    "keyword": hits(("a", 3.0), ("b", 1.0), chunk_id=1),
    "vector": hits(("b", 3.0), ("c", 1.0), chunk_id=2),
}


def ranked(fused: list) -> list[tuple[str, float]]:
    return [(f.doc_id, pytest.approx(f.score)) for f in fused]


def test_convex_sums_weighted_z_scores_and_a_missing_document_gets_the_lists_lowest() -> None:
    fused = fuse(LISTS, {"keyword": 0.5, "vector": 0.5})
    # a: 0.5 * 1 + vector's floor 0.5 * -1; b: 0.5 * -1 + 0.5 * 1; c: keyword's floor + -0.5
    assert ranked(fused) == [("a", 0.0), ("b", 0.0), ("c", -1.0)]


def test_equal_scores_are_ordered_by_document_id() -> None:
    both = {"keyword": 1.0, "vector": 1.0}
    fused = fuse({"keyword": hits(("z", 2.0)), "vector": hits(("y", 2.0))}, both, method="rrf")
    assert [f.doc_id for f in fused] == ["y", "z"]
    same = fuse({"keyword": hits(("q", 5.0), ("p", 5.0))}, {"keyword": 1.0})
    assert ranked(same) == [("p", 0.0), ("q", 0.0)]  # no spread: every z-score is 0


def test_rrf_adds_weight_over_k_plus_rank() -> None:
    fused = fuse(LISTS, {"keyword": 1.0, "vector": 1.0}, method="rrf")
    assert ranked(fused) == [
        ("b", 1 / (RRF_K + 2) + 1 / (RRF_K + 1)),
        ("a", 1 / (RRF_K + 1)),
        ("c", 1 / (RRF_K + 2)),
    ]
    assert RRF_K == 60


def test_single_keeps_the_lists_own_scores() -> None:
    fused = fuse({"vector": hits(("b", 0.9), ("a", 0.4))}, {"vector": 1.0}, method="single")
    assert ranked(fused) == [("b", 0.9), ("a", 0.4)]


def test_a_weight_of_zero_silences_a_list_but_keeps_its_documents() -> None:
    convex = fuse(LISTS, {"keyword": 0.5, "vector": 0.0})
    assert ranked(convex) == [("a", 0.5), ("b", -0.5), ("c", -0.5)]
    rrf = fuse(LISTS, {"keyword": 1.0, "vector": 0.0}, method="rrf")
    assert ranked(rrf) == [("a", 1 / (RRF_K + 1)), ("b", 1 / (RRF_K + 2)), ("c", 0.0)]
    unweighted = fuse(LISTS, {}, method="rrf")  # a list without a weight weighs 0
    assert ranked(unweighted) == [("a", 0.0), ("b", 0.0), ("c", 0.0)]


def test_the_chunk_comes_from_the_first_list_and_each_lists_rank_is_kept() -> None:
    b = next(f for f in fuse(LISTS, {"keyword": 0.5, "vector": 0.5}) if f.doc_id == "b")
    assert b.chunk_id == 1 and b.chunk == Chunk(1, 0, 1)  # keyword's, listed first
    assert b.parts == {
        "keyword": {"rank": 2, "score": 1.0},
        "vector": {"rank": 1, "score": 3.0},
    }
    explained = b.explain("convex", {"keyword": 0.5, "vector": 0.5})
    assert explained["keyword"] == {"rank": 2, "score": 1.0}
    assert explained["raw_score"] == b.score


def test_limit_and_empty_lists() -> None:
    assert [f.doc_id for f in fuse(LISTS, {"keyword": 1.0}, method="rrf", limit=1)] == ["a"]
    assert fuse({}, {}) == []
    assert fuse({"keyword": [], "vector": []}, {"keyword": 1.0, "vector": 1.0}) == []
    only_vector = fuse({"keyword": [], "vector": hits(("c", 0.3))}, {"vector": 1.0})
    assert ranked(only_vector) == [("c", 0.0)]
