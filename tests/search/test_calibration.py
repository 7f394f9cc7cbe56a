"""Calibrated scores: probabilities in [0, 1] in every mode, no reordering, cut-offs."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trove
from trove.errors import InvalidQuery
from trove.search import calibration
from trove.search.calibration import QueryInfo

NOTES = [
    (
        "Why we dropped Redis",
        "We dropped Redis in October: the cache saved little and cost a lot.",
    ),
    ("Sourdough", "Feed the starter the night before; mix flour and water, rest an hour."),
    ("Standup", "Ana benchmarks hybrid search; Bo finished the PDF reader."),
    ("Incident", "A configuration change lowered the connection pool of the search API."),
]


@pytest.fixture
def notes(store_target: str):
    with trove.open(store_target, embedder="hash:64") as kb:
        for title, text in NOTES:
            kb.add(text, title=title, source="notes", source_id=title)
        yield kb


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_scores_are_probabilities_in_every_mode(notes: trove.Store, mode: str) -> None:
    for query in ("why did we drop redis", "flour water", "zzqx kkv", "数据库"):
        hits = notes.search(query, mode=mode, limit=10, explain=True)
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        for hit in hits:  # the retrievers' own scores stay in explain
            assert hit.explain is not None and "raw_score" in hit.explain
            assert hit.explain["calibration"]["model"]


def test_calibration_keeps_the_fused_order(notes: trove.Store) -> None:
    hits = notes.search("search redis pool", mode="hybrid", limit=10, explain=True)
    raw = [h.explain["raw_score"] for h in hits if h.explain]
    assert raw == sorted(raw, reverse=True)


def test_a_lone_keyword_hit_is_not_scored_zero(notes: trove.Store) -> None:
    (hit,) = notes.search("sourdough", mode="keyword")
    assert hit.score > 0.0


def test_min_score_cuts_weak_hits_and_is_checked(notes: trove.Store) -> None:
    everything = notes.search("redis search", limit=10)
    floor = everything[0].score
    kept = notes.search("redis search", limit=10, min_score=floor)
    assert kept and all(h.score >= floor for h in kept)
    assert len(kept) < len(everything) or all(h.score == floor for h in everything)
    assert notes.search("redis search", min_score=1.0) == [] or floor == 1.0
    for bad in (-0.1, 1.5, "high", True):
        with pytest.raises(InvalidQuery, match="min_score"):
            notes.search("redis", min_score=bad)


def test_a_document_can_ask_for_a_strong_match(notes: trove.Store) -> None:
    shy = notes.add("Redis notes kept for the record.", metadata={"min_score": 1.0})
    assert shy not in [h.doc_id for h in notes.search("redis", limit=10)]
    loud = notes.add("Redis notes for everyone.", metadata={"min_score": 0.0})
    assert loud in [h.doc_id for h in notes.search("redis", limit=10)]


def test_the_shipped_calibration_is_small_and_versioned() -> None:
    data = json.loads(calibration.MODEL_FILE.read_text(encoding="utf-8"))
    assert data["features_version"] == calibration.FEATURES_VERSION
    assert calibration.MODEL_FILE.stat().st_size < 20_000
    assert "keyword" in data["models"]


def test_monotone_never_reorders_and_clamps() -> None:
    assert calibration.monotone([0.2, 0.9, 0.1, 1.5, -1.0]) == [0.2, 0.199999, 0.1, 0.099999, 0.0]


def test_features_of_an_absent_leg_sit_below_the_deepest_rank() -> None:
    info = QueryInfo(terms=3, cjk=False)
    parts = {"keyword": {"rank": 1, "score": 5.0}}
    row = calibration.features(
        parts, {"keyword": 5.0, "semantic": 0.8}, ["keyword", "semantic"], info, 1
    )
    assert row[:4] == [1.0, math.log1p(5.0), 1.0, 0.0]
    assert row[4:8] == [0.0, 0.0, 0.0, math.log(201.0)]


THREE_NOTES = [
    ("Why we dropped Redis", "We dropped Redis in October: the cache saved little."),
    ("Sourdough", "Feed the starter the night before; mix flour and water."),
    ("Standup", "Ana benchmarks hybrid search; Bo finished the PDF reader."),
]


@pytest.mark.parametrize("embedder", [None, "hash:64"])
def test_a_store_of_three_notes_shows_its_keyword_match_over_the_floor(
    store_target: str, embedder: str | None
) -> None:
    # BM25's idf is near zero in a store of three documents: before the coverage feature
    # a true keyword match scored ~0.01 and the CLI's floor hid it.
    with trove.open(store_target, embedder=embedder) as kb:
        for title, text in THREE_NOTES:
            kb.add(text, title=title)
        for query, title in (
            ("redis", "Why we dropped Redis"),
            ("sourdough starter", "Sourdough"),
        ):
            hits = kb.search(query)
            assert hits[0].title == title
            assert hits[0].score >= calibration.FLOOR, (query, hits[0].score)
        for nonsense in ("zzqx kkv", "quantum giraffe", "量子长颈鹿"):
            assert all(h.score < calibration.FLOOR for h in kb.search(nonsense)), nonsense


def test_coverage_is_the_share_of_query_terms_the_text_holds() -> None:
    info = calibration.query_info(("notes", "redis", "kafka"), ("数据库",), False)
    assert info.grams == ("数据", "据库")
    text = "Why we dropped Redis (note: 数据 only)"
    assert calibration.coverage(info, text) == pytest.approx(3 / 5)
    assert calibration.coverage(info, "") == 0.0
    assert calibration.coverage(calibration.query_info((), (), False), text) == 0.0


def _coverage_by_tokens(query: calibration.QueryInfo, text: str) -> float:
    """Coverage as first written: lower-case the text, find each stem at a token's start."""
    terms = len(query.words) + len(query.grams)
    if not terms or not text:
        return 0.0
    lowered = text.lower()
    found = sum(1 for gram in query.grams if gram in lowered)
    tokens = re.findall(r"[^\W_]+", lowered)
    for word in query.words:
        stem = word[: max(4, len(word) - 2)]
        found += any(t.startswith(stem) for t in tokens)
    return found / terms


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.text(alphabet="abcdeαβ_-19 ", min_size=0, max_size=8), max_size=5),
    text=st.text(alphabet="abcdeABCαβΑ_-19 .\n", max_size=80),
)
def test_coverage_of_ascii_text_by_folding_matches_coverage_by_tokens(
    words: list[str], text: str
) -> None:
    info = calibration.query_info(tuple(w.lower() for w in words if w), (), False)
    assert calibration.coverage(info, text) == _coverage_by_tokens(info, text)
