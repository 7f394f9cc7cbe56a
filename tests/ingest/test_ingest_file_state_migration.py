"""File state in one table: a store from before kept the hashes of derived-format files
as ``ingest.file:`` keys in ``meta``; the schema migration (SQLite 10, PostgreSQL 6)
moves them into ``file_stat`` and deletes them, and the folder stays unchanged."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import apsw
import psycopg
import pytest

import trove
from trove.backends.file_state import FileState
from trove.backends.postgres.url import parse
from trove.ingest.report import IngestReport

OLD_NS = time.time_ns() - 3600 * 10**9
FIELDS = {"text": "body"}


def write(path: Path, text: str, *, settled: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if settled:
        os.utime(path, ns=(OLD_NS, OLD_NS))


def counts(report: IngestReport) -> tuple[int, int, int, int]:
    return report.files_read, report.added, report.updated, report.unchanged


def fill(vault: Path) -> None:
    write(vault / "a.md", "about kafka")
    write(
        vault / "café.jsonl", "".join(json.dumps({"body": f"line {i}"}) + "\n" for i in range(2))
    )
    write(vault / "page.html", "<html><body><p>about pulsar</p></body></html>")
    # Modified just now: its hash is recorded, its stat is not.
    write(vault / "new.html", "<html><body><p>fresh words</p></body></html>", settled=False)


def old_rows(
    states: dict[str, FileState],
) -> tuple[list[tuple[object, ...]], list[tuple[str, str]]]:
    """file_stat rows and meta keys as a store from before recorded these states."""
    stats = [
        (
            "default",
            "vault",
            rel,
            s.stat.size,
            s.stat.mtime_ns,
            s.stat.ctime_ns,
            s.stat.content_hash,
        )
        for rel, s in states.items()
        if s.stat is not None
    ]
    keys = [
        ("ingest.file:" + json.dumps(["default", "vault", rel], ensure_ascii=False), s.file_hash)
        for rel, s in states.items()
        if s.file_hash is not None
    ]
    return stats, keys


@pytest.mark.sqlite_only
def test_sqlite_moves_the_meta_hashes_into_file_stat(tmp_path: Path) -> None:
    vault, db = tmp_path / "vault", tmp_path / "kb.db"
    fill(vault)
    with trove.open(db, embedder=None) as kb:
        assert counts(kb.ingest(vault, fields=FIELDS)) == (4, 5, 0, 0)
        states = kb.backend.file_states("default", "vault")
    assert states["new.html"].stat is None and states["new.html"].file_hash
    assert states["café.jsonl"].file_hash and states["a.md"].file_hash is None
    stats, keys = old_rows(states)
    conn = apsw.Connection(str(db))  # back to schema 9: hashes in meta
    conn.execute(
        "DROP TABLE file_stat; CREATE TABLE file_stat (namespace TEXT NOT NULL, "
        "source TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, "
        "mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, content_hash TEXT NOT NULL, "
        "PRIMARY KEY (namespace, source, path)) STRICT, WITHOUT ROWID"
    )
    conn.executemany("INSERT INTO file_stat VALUES (?, ?, ?, ?, ?, ?, ?)", stats)
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", keys)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    with trove.open(db, embedder=None) as kb:
        assert kb.backend.file_states("default", "vault") == states
        assert kb.backend.get_meta(keys[0][0]) is None
        assert counts(kb.ingest(vault, fields=FIELDS)) == (1, 0, 0, 5)  # new.html: racy
    conn = apsw.Connection(str(db))
    left = conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'ingest.file:%'").fetchall()
    assert left == [(0,)]


def test_postgres_moves_the_meta_hashes_into_file_stat(
    tmp_path: Path, pg_target: str, pg_url: str
) -> None:
    vault = tmp_path / "vault"
    fill(vault)
    with trove.open(pg_target, embedder=None) as kb:
        kb.ingest(vault, fields=FIELDS)
        states = kb.backend.file_states("default", "vault")
    stats, keys = old_rows(states)
    schema = parse(pg_target).schema
    with psycopg.connect(pg_url, autocommit=True) as conn:  # back to schema 5
        conn.execute(f"SET search_path = {schema}".encode())
        conn.execute(b"DELETE FROM file_stat")
        conn.execute(b"ALTER TABLE file_stat DROP COLUMN file_hash")
        with conn.cursor() as cur:
            cur.executemany(b"INSERT INTO file_stat VALUES (%s, %s, %s, %s, %s, %s, %s)", stats)
            cur.executemany(b"INSERT INTO meta (key, value) VALUES (%s, %s)", keys)
        # and without what schemas 7 and 8 added (the word postings, their log)
        conn.execute(b"DROP TRIGGER chunk_postings ON chunk")
        conn.execute(b"DROP FUNCTION trove_drop_postings(); DROP TABLE posting, term_df")
        conn.execute(b"DROP TABLE posting_log, corpus_size")
        conn.execute(b"DELETE FROM trove_migrations WHERE version >= 6")
    with trove.open(pg_target, embedder=None) as kb:
        assert kb.backend.file_states("default", "vault") == states
        assert kb.backend.get_meta(keys[0][0]) is None
        assert counts(kb.ingest(vault, fields=FIELDS)) == (1, 0, 0, 5)
