"""The k-NN of the PostgreSQL backend: one statement finds the nearest chunks (HNSW),
keeps those the filter allows and collapses them to documents in the server."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

import trove
from helpers.pg_statements import statements
from trove.backends.postgres import knn
from trove.backends.postgres.vectors import as_array
from trove.search.filters import Filters

TOPICS = [
    "coffee", "tea", "brewing", "kettle", "grinder", "roast",
    "leaf", "milk", "sugar", "cup", "pot", "water",
]  # fmt: skip


def exact_documents(kb: trove.Store, query: np.ndarray, **where: str) -> list[tuple[str, int]]:
    """(document, best chunk) by exact cosine similarity, computed here."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    rows = kb.backend.rows(  # type: ignore[attr-defined]
        f"SELECT v.chunk_id, c.doc_id, d.source, v.embedding FROM {lock.table} v "
        "JOIN chunk c ON c.id = v.chunk_id JOIN document d ON d.id = c.doc_id"
    )
    scored = sorted(
        (-float(as_array(vector) @ query), int(cid), str(doc))
        for cid, doc, source, vector in rows
        if where.get("source", source) == source
    )
    best: dict[str, int] = {}
    for _, cid, doc in scored:
        best.setdefault(doc, cid)
    return list(best.items())


def test_a_semantic_search_finds_its_documents_in_one_statement(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        rng = np.random.default_rng(7)
        kb.add_many(
            {"text": " ".join(rng.choice(TOPICS, 4, replace=False)), "source_id": str(i)}
            for i in range(150)
        )
        query = kb.embedder.embed_query("coffee brewing")  # type: ignore[union-attr]
        sent = statements(monkeypatch)
        hits = kb.search("coffee brewing", mode="semantic", limit=10)
        assert len([s for s in sent if "<=>" in s]) == 1
        assert {h.doc_id for h in hits} == {d for d, _ in exact_documents(kb, query)[:10]}


def test_documents_of_many_chunks_come_back_once_with_their_best_chunk(pg_target: str) -> None:
    words = ["granite", "basalt", "marble", "slate", "quartz", "shale"]
    with trove.open(pg_target, embedder="hash:64", chunk_chars=60, chunk_overlap=0) as kb:
        for i in range(30):
            parts = [
                f"{words[(i + j) % 6]} {words[(i * j) % 6]} stone layer {j}." for j in range(6)
            ]
            kb.add(" ".join(parts), source_id=str(i), source="odd" if i % 2 else "even")
        assert kb.stats().chunks > 3 * kb.stats().documents
        query = kb.embedder.embed_query("granite marble")  # type: ignore[union-attr]
        for where in ({}, {"source": "odd"}):
            hits = kb.backend.vector_search(  # the backend's own ranking, not fused
                kb.backend.vector_lock(),  # type: ignore[arg-type]
                query,
                Filters.build(**where),
                8,
                0.0,
            )
            expected = exact_documents(kb, query, **where)[:8]
            assert [(h.doc_id, h.chunk_id) for h in hits] == expected


def test_a_filter_that_allows_nothing_finds_nothing(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many({"text": f"plain note {i}", "source_id": str(i)} for i in range(30))
        sent = statements(monkeypatch)
        assert kb.search("plain note", mode="semantic", source="nowhere") == []
        # The walk saw every chunk the table holds (30 < ef_search): no wider scan, no
        # exact ranking after it.
        assert len([s for s in sent if "<=>" in s]) == 1
        assert len(kb.search("plain note", mode="semantic", limit=50)) == 30


def test_the_index_is_asked_for_ef_search_chunks_or_the_limit(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many({"text": f"plain note {i}", "source_id": str(i)} for i in range(30))
        seen: list[Any] = []
        read_with = type(kb.backend).read_with

        def spy(self: Any, settings: dict[str, str], query: Any, params: Any = ()) -> Any:
            seen.append(settings.get("hnsw.ef_search"))
            return read_with(self, settings, query, params)

        monkeypatch.setattr(type(kb.backend), "read_with", spy)
        kb.search("plain note", mode="semantic", limit=5)
        kb.search("plain note", mode="semantic", limit=knn.EF_SEARCH + 50)
    assert seen == [str(knn.EF_SEARCH), str(knn.EF_SEARCH + 50)]


def test_documents_whose_chunks_fill_the_first_rows_still_give_the_limit(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64", chunk_chars=40, chunk_overlap=0) as kb:
        for i in range(3):  # the nearest dozens of chunks are these three documents'
            sentence = "granite " * (i + 1) + "quarry block."
            kb.add(" ".join([sentence] * 12), source_id=f"near{i}")
        kb.add_many({"text": f"granite note {i}", "source_id": str(i)} for i in range(20))
        query = kb.embedder.embed_query("granite quarry block")  # type: ignore[union-attr]
        lock = kb.backend.vector_lock()
        assert lock is not None
        hits = kb.backend.vector_search(lock, query, Filters.build(), 6, 0.0)
        assert [(h.doc_id, h.chunk_id) for h in hits] == exact_documents(kb, query)[:6]
        assert len({h.doc_id for h in hits}) == 6


def test_a_search_reads_the_lock_once_and_survives_a_rebuild_by_another_handle(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        trove.open(pg_target, embedder="hash:64") as kb,
        trove.open(pg_target, embedder="hash:64") as other,
    ):
        kb.add_many({"text": f"plain note {i}", "source_id": str(i)} for i in range(30))
        kb.search("plain note", mode="semantic")
        sent = statements(monkeypatch)
        kb.search("plain note", mode="semantic")
        assert [s for s in sent if "FROM meta" in s] == []  # the lock, the mark: as read
        other.reembed()  # a new table; the one kb's search took is dropped
        assert len(kb.search("plain note", mode="semantic", limit=50)) == 30
        assert kb.backend.vector_lock() == other.backend.vector_lock()


def test_a_read_with_settings_is_one_implicit_transaction_without_begin_or_commit(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The k-NN's settings and statement go down one pipeline with no transaction block
    (psycopg's BEGIN and COMMIT cost 0.6 ms a k-NN): the settings hold for the statement,
    and end with it."""
    with trove.open(pg_target, embedder="hash:64") as kb:
        backend: Any = kb.backend
        blocks: list[object] = []
        transaction = psycopg.Connection.transaction

        def counted(self: psycopg.Connection, *args: Any, **kwargs: Any) -> Any:
            blocks.append(self)
            return transaction(self, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "transaction", counted)
        query = (
            "SELECT current_setting('hnsw.ef_search', true), current_setting('statement_timeout')"
        )
        for _ in range(3):
            rows = backend.read_with({"hnsw.ef_search": "123", "statement_timeout": "4321"}, query)
            assert rows == [("123", "4321ms")]
            after = backend.rows(query)  # nothing left on the connection
            assert after in ([("40", "0")], [(None, "0")])
        assert blocks == []


def test_the_k_nn_statement_runs_on_one_generic_plan(pg_target: str) -> None:
    """PostgreSQL planned the prepared k-NN afresh for each query vector (0.2-0.3 ms of a
    search at 100k chunks); it runs on its generic plan, with the same hits."""
    with trove.open(f"{pg_target}&pool_size=1", embedder="hash:64") as kb:
        rng = np.random.default_rng(3)
        kb.add_many(
            {"text": " ".join(rng.choice(TOPICS, 4, replace=False)), "source_id": str(i)}
            for i in range(80)
        )
        for words in ["coffee brewing", "tea leaf", "milk sugar"] * 8:
            query = kb.embedder.embed_query(words)  # type: ignore[union-attr]
            hits = kb.search(words, mode="semantic", limit=10)
            assert {h.doc_id for h in hits} == {d for d, _ in exact_documents(kb, query)[:10]}
        plans = kb.backend.rows(  # type: ignore[attr-defined]
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s",
            ("WITH near AS MATERIALIZED%",),
        )
    assert len(plans) == 1
    generic, custom = plans[0]
    assert generic > 0 and custom == 0


def test_a_semantic_search_reads_what_it_shows_of_its_hits_in_its_k_nn(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documents, text starts, passages and snippets a semantic search shows come
    with its k-NN (a round trip less), the same as read after it."""
    words = ["granite", "basalt", "marble", "slate", "quartz", "shale"]
    with trove.open(pg_target, embedder="hash:64", chunk_chars=60, chunk_overlap=0) as kb:
        for i in range(30):  # documents of several chunks: a passage is chosen among them
            parts = [
                f"{words[(i + j) % 6]} {words[(i * j) % 6]} stone layer {j}." for j in range(6)
            ]
            kb.add(
                " ".join(parts),
                title=f"rock {i}",
                source_id=str(i),
                source="odd" if i % 2 else "even",
            )
        kb.add_many({"text": f"granite note {i}", "source_id": f"n{i}"} for i in range(20))
        asked = [("granite marble", {}), ("slate layer", {"source": "odd"}), ("quartz", {})]
        folded = []
        for query, where in asked:
            sent = statements(monkeypatch)
            folded.append(kb.search(query, mode="semantic", limit=8, record_access=False, **where))
            assert len([s for s in sent if "<=>" in s]) == 1
            assert [s for s in sent if "left(d.text" in s] == [s for s in sent if "<=>" in s]
            monkeypatch.undo()

        def apart(
            self: Any, lock: Any, query: Any, filters: Any, limit: int, now: float, shown: Any
        ) -> Any:
            hits = self.vector_search(lock, query, filters, limit, now)
            read = [(h.doc_id, h.chunk_id) for h in hits]
            return hits, self.hit_details(shown[0], read, shown[1])

        monkeypatch.setattr(type(kb.backend), "vector_search_shown", apart)
        for (query, where), hits in zip(asked, folded, strict=True):
            assert hits, query
            assert kb.search(query, mode="semantic", limit=8, record_access=False, **where) == hits
        assert any(h.chunk.index > 0 for hits in folded for h in hits)  # passages chosen
