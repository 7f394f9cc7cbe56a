"""How many chunks a search ranks first for ``limit`` documents (ranking.first_window):
half again as many where documents have several chunks, a few spare ones where the store
holds one-chunk documents (chat messages, memories), and widened when a filter or a
document's chunks leave too few."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trove
from trove.backends.ranking import first_window
from trove.backends.sqlite import search as keyword
from trove.backends.sqlite.stats import chunk_repeats
from trove.backends.sqlite.vector_index import searcher as semantic


@given(st.integers(0, 5_000), st.floats(0.0, 1.0))
def test_a_window_is_never_wider_than_for_documents_that_repeat(limit: int, repeats: float):
    window = first_window(limit, repeats)
    assert first_window(limit) == max(limit + limit // 2, 50)  # stores of many chunks
    assert limit + min(16, limit // 2) <= window <= first_window(limit)
    assert window <= first_window(limit, min(1.0, repeats + 0.1))


def test_one_chunk_documents_rank_a_few_spare_chunks() -> None:
    assert first_window(200, 0.0) == 216  # a hybrid leg: not 300
    assert first_window(200, 0.05) == 220
    assert first_window(200, 0.25) == 300
    assert first_window(10, 0.0) == 50


def test_the_share_of_chunks_that_add_no_document_is_read_from_the_tallies(db_path: Path):
    with trove.open(db_path, chunk_chars=200, chunk_overlap=0) as kb:
        assert chunk_repeats(kb.backend.conn) == 1.0  # nothing known yet
        ids = kb.add_many({"text": f"note {i} about tea"} for i in range(5))
        assert chunk_repeats(kb.backend.conn) == 0.0
        long = kb.add("a sentence of a long page about tea. " * 30)
        chunks = kb.stats().chunks - 5
        assert chunks > 2
        assert chunk_repeats(kb.backend.conn) == pytest.approx((chunks - 1) / (chunks + 5))
        # A deleted document's chunks stay ranked until purged, and the filter hides them.
        kb.delete(long)
        kb.add("one more note", namespace="other")
        assert chunk_repeats(kb.backend.conn) == pytest.approx(chunks / (chunks + 6))
        kb.delete(ids[0])
        assert chunk_repeats(kb.backend.conn) == pytest.approx((chunks + 1) / (chunks + 6))


def test_both_legs_of_a_search_rank_the_window_the_store_needs(db_path: Path, monkeypatch):
    windows: list[int] = []

    def spy(limit: int, repeats: float = 1.0) -> int:
        windows.append(first_window(limit, repeats))
        return windows[-1]

    monkeypatch.setattr(keyword, "first_window", spy)
    monkeypatch.setattr(semantic, "first_window", spy)
    with trove.open(db_path, embedder="hash:64", chunk_chars=200, chunk_overlap=0) as kb:
        kb.add_many({"text": f"a tea note, number {i}"} for i in range(300))
        kb.warm()
        kb.search("tea note", mode="hybrid")  # each leg: 200 documents
        assert windows == [216, 216]
        windows.clear()
        kb.add_many({"text": f"a long page about tea, part {i}. " * 40} for i in range(40))
        assert chunk_repeats(kb.backend.conn) >= 0.25
        kb.search("tea note", mode="hybrid")
        assert windows == [300, 300]


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_filter_that_hides_the_top_of_a_one_chunk_store_widens(db_path: Path, mode) -> None:
    with trove.open(db_path, embedder="hash:64") as kb:
        # The other namespace's notes match best and crowd the first window.
        kb.add_many(
            {"text": f"green tea green tea green tea {i}", "namespace": "other"}
            for i in range(120)
        )
        # Each its own count of the words and length: no two tie.
        kb.add_many(
            {"text": "green " + "tea " * (1 + i % 5) + "and a long day " * (1 + i // 5)}
            for i in range(100)
        )
        kb.warm()
        hits = kb.search("green tea", mode=mode, limit=80)
        assert len(hits) == 80
        assert {kb.get(h.doc_id).namespace for h in hits} == {"default"}
        everything = kb.search("green tea", mode=mode, limit=100)
        assert [h.doc_id for h in everything[:80]] == [h.doc_id for h in hits]
