"""Keyword search asks the filter about ranked chunks in rank order, a batch at a time,
until it has its documents (backends/sqlite/search.py): the same hits as asking about
every ranked chunk at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import trove
from trove.backends.ranking import collapse
from trove.backends.sqlite import filters as sqlite_filters
from trove.backends.sqlite.filters import allowed_chunks, filter_sql
from trove.search.filters import Filters
from trove.search.query import parse


@pytest.fixture
def kb(db_path: Path):
    with trove.open(db_path, embedder=None) as store:
        yield store


@pytest.fixture
def asked(monkeypatch) -> list[int]:
    """How many chunks each of a search's visibility checks asks about."""
    sizes: list[int] = []

    def spy(conn, chunk_ids, where, params):
        sizes.append(len(chunk_ids))
        return allowed_chunks(conn, chunk_ids, where, params)

    monkeypatch.setattr(sqlite_filters, "allowed_chunks", spy)
    return sizes


def every_chunk_checked(kb: trove.Store, query: str, limit: int, **filters) -> list[str]:
    """The documents a search finds when the filter is asked about the whole window."""
    backend = kb.backend
    where, params = filter_sql(Filters.build(**filters), time.time())
    ranker = backend._word_ranker(parse(query))  # type: ignore[attr-defined]
    ranked = ranker(10_000)
    allowed = allowed_chunks(backend.conn, [c for c, _ in ranked], where, params)  # type: ignore[attr-defined]
    hits = sorted(collapse(ranked, allowed, limit), key=lambda h: (-h.score, h.doc_id))
    return [h.doc_id for h in hits]


def test_asks_about_few_chunks_when_the_best_are_visible(kb, asked) -> None:
    kb.add_many({"text": f"graph note {i} " + "graph " * (i % 7)} for i in range(80))
    kb.warm()
    hits = kb.search("graph note", mode="keyword", limit=10)
    assert len(hits) == 10
    assert asked == [15]  # not the whole first window of 50
    asked.clear()
    # A deep window (a hybrid leg's 200 documents of 300 chunks): a few spare chunks, not
    # half again (each costs ~20 us at 1M chunks).
    hits = kb.search("graph note", mode="keyword", limit=60)
    assert len(hits) == 60
    assert asked == [76]


def test_a_semantic_leg_asks_in_rank_order_too(db_path: Path, asked) -> None:
    with trove.open(db_path, embedder="hash:64") as store:
        store.add_many({"text": f"graph note {i}"} for i in range(300))
        store.warm()
        assert len(store.search("graph note", mode="semantic", limit=200)) == 200
        assert asked == [216]  # not the whole first window of 300


def test_hidden_chunks_ranked_first_are_passed_over(kb) -> None:
    # The best-ranked chunks belong to deleted documents, another namespace, or share a
    # document: the batches go on until ten visible documents are found, in rank order.
    strong = kb.add_many({"text": "graph " * 9 + f"strong {i}"} for i in range(25))
    kb.add_many({"text": "graph " * 8 + f"else {i}", "namespace": "other"} for i in range(25))
    kb.add_many({"text": f"graph {i}. " + "filler words here. graph. " * 200} for i in range(9))
    kb.add_many({"text": f"a graph note {i}"} for i in range(30))
    kb.add_many({"text": f"nothing to find here {i}"} for i in range(150))
    for doc_id in strong[:20]:
        kb.delete(doc_id)
    kb.warm()
    for limit in (1, 3, 10, 40):
        hits = kb.search("graph", mode="keyword", limit=limit)
        assert [h.doc_id for h in hits] == every_chunk_checked(kb, "graph", limit)
        assert len(hits) == limit
    other = kb.search("graph", mode="keyword", limit=10, namespace="other")
    assert [h.doc_id for h in other] == every_chunk_checked(kb, "graph", 10, namespace="other")
