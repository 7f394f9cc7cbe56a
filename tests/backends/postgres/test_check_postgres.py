"""``trove check`` on PostgreSQL: a clean store reports nothing; a store damaged by hand
(a posting, a vector, a document row deleted behind the constraints) is reported, each
kind of damage in its own line."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner

import trove
from trove.backends.postgres.url import parse
from trove.check import check
from trove.interfaces.cli import cli


def _damage(pg_url: str, statements: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        # Bypasses foreign keys and triggers, as a restore without constraints would.
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute(statements)


@pytest.fixture
def filled(pg_target: str) -> str:
    with trove.open(pg_target, embedder="hash:64") as kb:
        for i in range(6):
            kb.add(f"note {i} about caches and queues", source="s", source_id=str(i))
        a, b = (
            kb.add("left", source="s", source_id="a"),
            kb.add("right", source="s", source_id="b"),
        )
        kb.link(a, b, "relates_to")
    return pg_target


def _problems(target: str) -> list[str]:
    with trove.open(target, embedder="hash:64") as kb:
        return check(kb).problems


def test_a_clean_store_reports_nothing(filled: str) -> None:
    result = CliRunner().invoke(cli, ["--db", filled, "check", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["problems"] == []
    assert report["documents"] == 8 and report["chunks"] == report["vectors"] == 8


def test_a_deleted_vector_is_reported(filled: str, pg_url: str) -> None:
    schema = parse(filled).schema
    _damage(pg_url, f"DELETE FROM {schema}.chunk_vec_1 WHERE chunk_id = "
                    f"(SELECT min(chunk_id) FROM {schema}.chunk_vec_1)")  # fmt: skip
    assert _problems(filled) == [
        "1 chunks have no vector in chunk_vec_1 (`trove reembed --missing` embeds them)"
    ]


def test_a_deleted_posting_is_reported(filled: str, pg_url: str) -> None:
    schema = parse(filled).schema
    _damage(pg_url, f"DELETE FROM {schema}.posting WHERE ctid = "
                    f"(SELECT min(ctid) FROM {schema}.posting)")  # fmt: skip
    problems = _problems(filled)
    assert any("word postings for its" in p for p in problems), problems
    assert any(p.startswith("term_df:") for p in problems), problems


def test_rows_of_a_document_deleted_behind_the_constraints_are_reported(
    filled: str, pg_url: str
) -> None:
    schema = parse(filled).schema
    _damage(pg_url, f"DELETE FROM {schema}.document WHERE source_id IN ('0', 'a')")
    problems = _problems(filled)
    assert "chunk: 2 chunks of documents that are gone" in problems
    assert "edge: 1 links from or to documents that are gone" in problems
    # The vectors still have their chunks; the postings of the orphaned chunks still
    # agree with them: no other line.
    assert len(problems) == 2, problems
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(f"DELETE FROM {schema}.chunk c WHERE NOT EXISTS "
                     f"(SELECT 1 FROM {schema}.document d WHERE d.id = c.doc_id)")  # fmt: skip
    assert "chunk_vec_1: 2 vectors of chunks that are gone" in _problems(filled)
