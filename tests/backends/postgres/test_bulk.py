"""Bulk vector writes on PostgreSQL: the HNSW index set aside during a large load and
built again after it, with the same search results."""

from __future__ import annotations

import psycopg
import pytest

import trove
from trove.backends.postgres import bulk
from trove.backends.postgres.url import parse


def hnsw_indexes(pg_url: str, schema: str) -> list[str]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexdef LIKE %s",
            (schema, "%hnsw%"),
        ).fetchall()
    return [str(r[0]) for r in rows]


def docs(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {
            "text": f"note {i} about {'cats' if i % 3 else 'dogs'} and {i % 7} things",
            "source_id": str(i),
        }
        for i in range(start, start + n)
    ]


def test_a_bulk_load_sets_the_index_aside_and_builds_it_after(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BULK_ROWS", 10)
    schema = parse(pg_target).schema
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("the first note", source_id="first")
        assert len(hnsw_indexes(pg_url, schema)) == 1
        kb.add_many(docs(60), batch_size=20)
        assert hnsw_indexes(pg_url, schema) == []  # set aside while the load goes on
        kb.add_many(docs(3, start=100), batch_size=20)  # a small batch: the load is over
        assert len(hnsw_indexes(pg_url, schema)) == 1
        kb.add_many(docs(12, start=200), batch_size=20)  # 64 rows, over 4 x 12: kept
        assert len(hnsw_indexes(pg_url, schema)) == 1
        assert kb.stats().vectors == 76


def test_searches_are_the_same_during_and_after_and_close_builds_the_index(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BULK_ROWS", 10)
    schema = parse(pg_target).schema
    with trove.open(pg_target, embedder="hash:64") as writer:
        writer.add_many(docs(40), batch_size=20)
        assert hnsw_indexes(pg_url, schema) == []
        with trove.open(pg_target, embedder="hash:64") as reader:  # exact meanwhile
            during = [h.doc_id for h in reader.search("dogs", mode="semantic", limit=5)]
    assert len(hnsw_indexes(pg_url, schema)) == 1  # the writer's close built it
    with trove.open(pg_target, embedder="hash:64") as reader:
        after = [h.doc_id for h in reader.search("dogs", mode="semantic", limit=5)]
    assert during == after and len(after) == 5


def test_a_writers_own_semantic_search_builds_the_index_first(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BULK_ROWS", 10)
    schema = parse(pg_target).schema
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(docs(30), batch_size=30)
        assert hnsw_indexes(pg_url, schema) == []
        assert len(kb.search("cats", mode="semantic", limit=3)) == 3
        assert len(hnsw_indexes(pg_url, schema)) == 1


def test_an_index_left_set_aside_by_a_killed_writer_is_built_by_the_next_one(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BULK_ROWS", 10)
    schema = parse(pg_target).schema
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(docs(30), batch_size=30)
        kb.backend.__dict__["_aside"].clear()  # as if killed before building it again
    assert hnsw_indexes(pg_url, schema) == []
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("one more note", source_id="late")
        assert len(hnsw_indexes(pg_url, schema)) == 1
