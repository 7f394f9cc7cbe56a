"""Semantic search widens its window when a few documents' chunks crowd the top
(backends/sqlite/vector_index/searcher.py): each ranked chunk is checked against the
filters once, and the hits are those of checking the widest window at once."""

from __future__ import annotations

from pathlib import Path

import pytest

import trove
from trove.backends.sqlite import filters as sqlite_filters
from trove.backends.sqlite.vector_index import searcher as semantic


@pytest.fixture
def kb(db_path: Path):
    with trove.open(db_path, embedder="hash:64", chunk_chars=200, chunk_overlap=0) as store:
        # Five long documents of many chunks each rank first, then one-chunk notes.
        store.add_many({"text": "graph theory notes. " * 400 + f"long {i}"} for i in range(5))
        store.add_many({"text": f"graph theory {i}"} for i in range(40))
        store.add_many({"text": f"graph theory {i}", "namespace": "other"} for i in range(40))
        store.warm()
        yield store


def test_a_wider_window_checks_only_chunks_it_had_not(kb, monkeypatch) -> None:
    asked: list[int] = []

    allowed_chunks = sqlite_filters.allowed_chunks

    def spy(conn, chunk_ids, where, params):
        asked.extend(chunk_ids)
        return allowed_chunks(conn, chunk_ids, where, params)

    monkeypatch.setattr(sqlite_filters, "allowed_chunks", spy)
    hits = kb.search("graph theory notes", mode="semantic", limit=30)
    assert len(hits) == 30
    assert len(asked) > semantic.first_window(30)  # it widened
    assert len(asked) == len(set(asked))  # and asked about no chunk twice
    assert all(kb.get(h.doc_id).namespace == "default" for h in hits)
