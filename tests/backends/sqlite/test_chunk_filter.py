"""A search checks its ranked chunks without reading their documents while no document in
the store can fail its filter (backends/sqlite/filters.py ``chunk_filter``), and with the
whole clause as soon as one can."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import trove
from trove.backends.sqlite import filters as sqlite_filters
from trove.backends.sqlite.filters import allowed_chunks, chunk_filter, filter_sql
from trove.search.filters import Filters


@pytest.fixture
def kb(db_path: Path):
    with trove.open(db_path, embedder="hash:64") as store:
        store.add_many({"text": f"graph note {i}"} for i in range(40))
        store.warm()
        yield store


def checked(kb: trove.Store, now: float | None = None, **filters) -> str:
    """The clause a search with ``filters`` checks its chunks with."""
    conn = kb.backend.conn  # type: ignore[attr-defined]
    return chunk_filter(conn, Filters.build(**filters), now or time.time())[0]


def test_no_clause_while_every_document_is_live_and_in_the_namespace(kb) -> None:
    assert checked(kb) == ""
    assert checked(kb, session="s1") == ""  # no session's documents to hide
    assert checked(kb, namespace="other") != ""  # every document is outside it


def test_the_clause_for_any_other_filter(kb) -> None:
    assert checked(kb, source="notes") != ""
    assert checked(kb, since="2000-01-01") != ""
    assert checked(kb, tags=["a"]) != ""


def test_the_clause_once_a_document_is_deleted(kb) -> None:
    kb.delete(kb.add("gone soon"))
    assert checked(kb) != ""


def test_the_clause_once_another_namespace_has_documents(kb) -> None:
    kb.add("elsewhere", namespace="other")
    assert checked(kb) != ""


def test_the_clause_for_another_sessions_documents(kb) -> None:
    kb.add("said in a session", scope="session", session="s1")
    assert checked(kb) == ""  # no session asked for: session items show
    assert checked(kb, session="s1") == ""
    assert checked(kb, session="s2") != ""


def test_the_clause_once_a_document_has_expired(kb) -> None:
    kb.add("a short-lived memo", expires_at="2100-01-01T00:00:00Z")
    assert checked(kb) == ""  # not expired yet
    assert checked(kb, now=4_200_000_000.0) != ""  # 2103


@pytest.mark.parametrize("mode", ["keyword", "semantic"])
def test_searches_check_chunks_without_their_documents(kb, monkeypatch, mode) -> None:
    clauses: list[str] = []

    def spy(conn, chunk_ids, where, params):
        clauses.append(where)
        return allowed_chunks(conn, chunk_ids, where, params)

    monkeypatch.setattr(sqlite_filters, "allowed_chunks", spy)
    hits = kb.search("graph note", mode=mode, limit=10)
    assert len(hits) == 10 and clauses and set(clauses) == {""}
    kb.delete(hits[0].doc_id)
    clauses.clear()
    again = kb.search("graph note", mode=mode, limit=10)
    assert hits[0].doc_id not in {h.doc_id for h in again}
    assert clauses and "" not in clauses


def test_no_clause_finds_what_the_clause_finds(kb) -> None:
    conn = kb.backend.conn  # type: ignore[attr-defined]
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM chunk ORDER BY id DESC")]
    where, params = filter_sql(Filters(), time.time(), by_id=True)
    assert allowed_chunks(conn, ids, "", ()) == allowed_chunks(conn, ids, where, params)


def test_a_commit_elsewhere_while_a_search_ranks_is_checked(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The word index catches up with other connections' commits as it ranks: whether a
    document can be hidden is asked after that, so another namespace's document that
    committed meanwhile is checked (and left out), not let through unread."""
    with trove.open(db_path, embedder=None) as kb:
        kb.add_many({"text": f"graph note {i}"} for i in range(40))
        kb.warm()
        words = kb.backend._words  # type: ignore[attr-defined]
        rank = words.ranker

        def meanwhile(terms):  # type: ignore[no-untyped-def]
            with trove.open(db_path, embedder=None) as other:
                other.add("graph note graph note graph note", namespace="other")
            return rank(terms)

        monkeypatch.setattr(words, "ranker", meanwhile)
        hits = kb.search("graph note", mode="keyword", limit=50)
        assert len(hits) == 40 and {h.namespace for h in hits} == {"default"}
