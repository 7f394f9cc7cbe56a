"""The file format: migrations, WAL, and refusing files that are not ours."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
import pytest

import trove
from helpers.threads import run_threads
from trove import NotATroveStore, SchemaTooNew, StoreError
from trove.backends.sqlite.schema import APPLICATION_ID, LATEST_VERSION

# The SQLite file format itself; tests/backends/postgres/ covers the PostgreSQL schema.
pytestmark = pytest.mark.sqlite_only


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_file_records_schema_and_uses_wal(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as kb:
        kb.add("x")
    conn = apsw.Connection(str(db_path))
    assert next(conn.execute("PRAGMA user_version"))[0] == LATEST_VERSION
    assert next(conn.execute("PRAGMA application_id"))[0] == APPLICATION_ID
    assert next(conn.execute("PRAGMA journal_mode"))[0] == "wal"


def test_foreign_sqlite_database_is_refused_untouched(db_path: Path) -> None:
    conn = apsw.Connection(str(db_path))
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('ana')")
    conn.close()
    before = _digest(db_path)
    with pytest.raises(NotATroveStore, match="not a trove store"):
        trove.open(db_path, embedder=None)
    assert _digest(db_path) == before
    assert not Path(str(db_path) + "-wal").exists()


def test_non_sqlite_file_is_refused_untouched(db_path: Path) -> None:
    db_path.write_text("just some notes, not a database\n")
    before = _digest(db_path)
    with pytest.raises(NotATroveStore, match="not a SQLite database"):
        trove.open(db_path, embedder=None)
    assert _digest(db_path) == before


def test_newer_schema_is_refused_untouched(db_path: Path) -> None:
    trove.open(db_path, embedder=None).close()
    conn = apsw.Connection(str(db_path))
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = _digest(db_path)
    with pytest.raises(SchemaTooNew, match="upgrade trove"):
        trove.open(db_path, embedder=None)
    assert _digest(db_path) == before


def test_empty_file_becomes_a_store(db_path: Path) -> None:
    db_path.touch()
    with trove.open(db_path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        trove.open(tmp_path, embedder=None)


def test_parent_directories_are_created(tmp_path: Path) -> None:
    with trove.open(tmp_path / "a" / "b" / "kb.db", embedder=None) as kb:
        kb.add("x")
    assert (tmp_path / "a" / "b" / "kb.db").exists()


def test_reopening_does_not_migrate_again(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as kb:
        doc_id = kb.add("kept")
    with trove.open(db_path, embedder=None) as kb:
        assert kb.get(doc_id) is not None
        assert kb.stats().schema_version == LATEST_VERSION


def test_two_connections_see_each_others_writes(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as a, trove.open(db_path) as b:
        doc_id = a.add("shared note")
        assert b.get(doc_id) is not None


def test_two_connections_creating_one_file_at_once(db_path: Path) -> None:
    run_threads(lambda _: trove.open(db_path, embedder=None).close(), 4, together=True)
    with trove.open(db_path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION
