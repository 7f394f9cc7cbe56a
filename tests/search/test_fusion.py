"""Fusion of two retrievers' ranked documents (trove.search.fusion.fuse), directly:
convex z-scores, reciprocal rank, a single list, ties, weights of zero, limits; and the
per-query weights (adapt, query_features) and where hybrid search applies them."""

from __future__ import annotations

from pathlib import Path

import pytest

import trove
from trove.models import Chunk, ChunkHit
from trove.search import fusion
from trove.search.fusion import RRF_K, adapt, fuse, query_features


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


# keyword: a clear winner (z of "a" 1.5: 4, 1, 1, 1... ); semantic: flat but for its top
LEGS = {
    "keyword": hits(("a", 4.0), ("b", 1.0), ("c", 1.0), ("d", 1.0), chunk_id=1),
    "semantic": hits(("b", 0.9), ("a", 0.5), ("e", 0.5), ("f", 0.5), chunk_id=2),
}


def test_query_features_are_each_legs_top_z_score_and_the_top_10_overlap() -> None:
    keyword_top, semantic_top, overlap = query_features(LEGS)
    assert keyword_top == pytest.approx(3**0.5)  # (4 - 1.75) / sqrt(27/16)
    assert semantic_top == pytest.approx(3**0.5)
    assert overlap == pytest.approx(0.2)  # a and b in both top 10s


def test_adapt_moves_the_keyword_weight_by_the_slopes_in_log_odds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fusion, "ADAPTIVE_CENTRE", (3**0.5, 3**0.5, 0.2))
    monkeypatch.setattr(fusion, "ADAPTIVE_SPREAD", (1.0, 1.0, 0.1))
    monkeypatch.setattr(fusion, "ADAPTIVE_SLOPES", (1.0, -1.0, 2.0))
    at_centre = adapt(LEGS, {"keyword": 0.5, "semantic": 0.5})
    assert at_centre == {"keyword": 0.5, "semantic": 0.5}
    agreeing = dict(LEGS, semantic=hits(("a", 0.9), ("b", 0.5), ("c", 0.5), ("f", 0.5)))
    # the same tops, one more shared document (a spread more overlap): log-odds + 2
    assert adapt(agreeing, {"keyword": 0.5, "semantic": 0.5}) == {
        "keyword": 0.881,
        "semantic": 0.119,
    }
    monkeypatch.setattr(fusion, "ADAPTIVE_SLOPES", (0.0, 0.0, 50.0))
    assert adapt(agreeing, {"keyword": 0.7, "semantic": 0.3})["keyword"] == 0.95  # bounded


def test_adapt_keeps_weights_that_silence_a_leg_and_a_query_one_leg_missed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fusion, "ADAPTIVE_SLOPES", (5.0, 5.0, 5.0))
    silenced = {"keyword": 1.0, "semantic": 0.0}
    assert adapt(LEGS, silenced) is silenced
    half = {"keyword": 0.5, "semantic": 0.5}
    assert adapt({"keyword": [], "semantic": LEGS["semantic"]}, half) is half
    assert adapt({"keyword": LEGS["keyword"], "semantic": []}, half) is half


def test_fuse_adaptive_uses_and_keeps_the_querys_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fusion, "ADAPTIVE_SLOPES", (0.0, 0.0, 50.0))
    half = {"keyword": 0.5, "semantic": 0.5}
    fixed = fuse(LEGS, half)
    assert {f.doc_id for f in fixed[:2]} == {"a", "b"}  # level at 0.5/0.5
    assert all(f.query_weights is None for f in fixed)
    adapted = fuse(LEGS, half, adaptive=True)
    used = adapt(LEGS, half)
    assert used["keyword"] > 0.5 and adapted[0].doc_id == "a"  # keyword's top now leads
    assert all(f.query_weights == used for f in adapted)
    assert adapted[0].explain("convex", half)["query_weights"] == used
    assert "query_weights" not in fixed[0].explain("convex", half)
    rrf = fuse(LEGS, {"keyword": 1.0, "semantic": 1.0}, method="rrf", adaptive=True)
    assert all(f.query_weights is None for f in rrf)  # only convex weights adapt


def test_hybrid_search_adapts_unless_the_store_sets_a_keyword_weight(tmp_path: Path) -> None:
    docs = [{"text": "Interferon gamma drives myocarditis in mice."}, {"text": "Bread recipes."}]
    with trove.open(tmp_path / "a.db", embedder="hash:64") as kb:
        kb.add_many(docs)
        explained = kb.search("interferon myocarditis", explain=True)[0].explain
        assert explained is not None
        assert explained["weights"] == {"keyword": 0.5, "semantic": 0.5}  # the script's
        used = explained["query_weights"]
        assert 0.05 <= used["keyword"] <= 0.95
        assert used["keyword"] + used["semantic"] == pytest.approx(1.0)
    with trove.open(tmp_path / "b.db", embedder="hash:64", keyword_weight=0.5) as kb:
        kb.add_many(docs)
        explained = kb.search("interferon myocarditis", explain=True)[0].explain
        assert explained is not None and "query_weights" not in explained


def test_prior_is_the_models_fitted_weight_for_the_script_else_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fusion, "PRIORS", {("m", "latin"): 0.8, ("m", "cjk"): 0.9})
    assert fusion.prior("m", frozenset({"latin"}), 0.5) == 0.8
    assert fusion.prior("m", frozenset({"cjk", "latin"}), 0.7) == 0.9  # any CJK: cjk
    assert fusion.prior("m", frozenset({"cyrillic"}), 0.5) == 0.5  # not fitted
    assert fusion.prior("other", frozenset({"latin"}), 0.5) == 0.5  # another model
    assert fusion.script_group(frozenset({"latin", "greek"})) == "greek+latin"


def test_hybrid_search_starts_from_the_embedders_prior(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fusion, "PRIORS", {("hash:64", "latin"): 0.8})
    docs = [{"text": "Interferon gamma drives myocarditis in mice."}, {"text": "Bread recipes."}]
    with trove.open(tmp_path / "a.db", embedder="hash:64") as kb:
        kb.add_many(docs)
        explained = kb.search("interferon myocarditis", explain=True)[0].explain
        assert explained is not None
        assert explained["weights"] == {"keyword": 0.8, "semantic": 0.2}
    with trove.open(tmp_path / "b.db", embedder="hash:32") as kb:  # no prior: the script's
        kb.add_many(docs)
        explained = kb.search("interferon myocarditis", explain=True)[0].explain
        assert explained is not None
        assert explained["weights"] == {"keyword": 0.5, "semantic": 0.5}
    with trove.open(tmp_path / "c.db", embedder="hash:64", keyword_weight=0.3) as kb:
        kb.add_many(docs)  # a weight the caller set wins over the prior
        explained = kb.search("interferon myocarditis", explain=True)[0].explain
        assert explained is not None
        assert explained["weights"] == {"keyword": 0.3, "semantic": 0.7}


def test_search_with_variants_adapts_its_weights_as_a_plain_search_does(tmp_path: Path) -> None:
    docs = [{"text": "Interferon gamma drives myocarditis in mice."}, {"text": "Bread recipes."}]
    with trove.open(tmp_path / "a.db", embedder="hash:64") as kb:
        kb.add_many(docs)
        hits = kb.search("interferon myocarditis", variants=["gamma mice"], explain=True)
        explained = hits[0].explain
        assert explained is not None and "query_weights" in explained
    with trove.open(tmp_path / "b.db", embedder="hash:64", keyword_weight=0.5) as kb:
        kb.add_many(docs)
        hits = kb.search("interferon myocarditis", variants=["gamma mice"], explain=True)
        explained = hits[0].explain
        assert explained is not None and "query_weights" not in explained
