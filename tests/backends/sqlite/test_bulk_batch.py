"""Every insert counts and logs its new documents and indexes and counts their chunks in
one statement each a batch (schema 13 has no insert triggers; schema 12 skipped them
during a batch): the index, the counts and the event log stay those triggers kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest

import trove
from trove import StoreError
from trove.backends.sqlite import bulk
from trove.backends.sqlite.chunk_text import word_index_problems
from trove.backends.sqlite.connection import (
    BULK_CHECKPOINT_PAGES,
    CHECKPOINT_PAGES,
    READ_CACHE_KB,
    WRITE_CACHE_KB,
)
from trove.backends.sqlite.events import written_trigger_sql
from trove.backends.sqlite.schema import LATEST_VERSION
from trove.backends.sqlite.stats import added_trigger_sql
from trove.backends.writes import DocumentWrite

pytestmark = pytest.mark.sqlite_only


def _conn(kb: trove.Store) -> Any:
    return kb.backend.conn  # type: ignore[attr-defined]


def assert_in_step(kb: trove.Store) -> None:
    """The word index holds exactly the chunk rows, the tallies count the rows, and every
    document has its 'written' event."""
    conn = _conn(kb)
    conn.execute("INSERT INTO chunk_fts (chunk_fts) VALUES ('integrity-check')")
    assert word_index_problems(conn) == []
    chunks = conn.execute("SELECT count(*) FROM chunk")[0][0]
    assert conn.execute("SELECT coalesce(sum(chunks), 0) FROM chunk_tally") == [(chunks,)]
    assert conn.execute("SELECT sum(docs), sum(text_bytes) FROM doc_tally") == conn.execute(
        "SELECT count(*), sum(length(CAST(text AS BLOB))) FROM document"
    )
    assert conn.execute(
        "SELECT doc_id FROM event_log WHERE kind = 'written' ORDER BY id"
    ) == conn.execute("SELECT id FROM document ORDER BY rowid")


def test_bulk_writes_are_found_and_counted(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        # Up to four chunks a document, some batches of them rewriting the last.
        items = [{"text": f"walrus {i} " + "tusk " * i, "source_id": str(i)} for i in range(300)]
        kb.add_many(items, batch_size=100)
        kb.add("a single walrus", session="s1", scope="session")
        kb.add_many([{"text": "walrus number 7 again", "source_id": "7"}])  # replaces
        assert kb.stats().documents == 301
        assert kb.stats().chunks > 301
        assert len(kb.search("walrus", mode="keyword", limit=400)) == 301
        assert_in_step(kb)


def test_a_failed_row_leaves_its_predecessors_indexed(tmp_path: Path) -> None:
    """A row of the batch fails (a duplicate chunk) inside an outer transaction whose
    caller goes on and commits: the rows before it are indexed and counted, and later
    writes are too."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add("first walrus", source_id="a")
        docs = [kb.writer.prepare({"text": f"walrus {i}", "source_id": f"b{i}"}) for i in range(3)]
        plans = kb.writer.plan(docs)
        writes = [DocumentWrite(p.doc, True, p.chunks, True) for p in plans.values()]
        writes[2] = DocumentWrite(writes[2].doc, True, writes[2].chunks * 2, True)
        backend = kb.backend
        with backend.transaction(), pytest.raises(apsw.ConstraintError):  # type: ignore[attr-defined]
            backend.put_many(writes)
        kb.add("a later walrus", source_id="c")
        assert_in_step(kb)
        assert kb.stats().chunks == 5
        assert len(kb.search("walrus", mode="keyword")) == 5


def test_a_failed_clean_up_rolls_the_transaction_back(tmp_path: Path) -> None:
    """Should a batch's own closing statements fail, its transaction can only roll back:
    a caller that swallows the error and commits gets a StoreError, and leaves no rows
    unindexed or uncounted (nor anything else of the transaction)."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add("first walrus", source_id="a")
        conn = kb.backend.conn  # type: ignore[attr-defined]
        with pytest.raises(StoreError, match="rolled back"), kb.transaction():
            kb.add("a walrus of the same transaction", source_id="b")
            with pytest.raises(apsw.SQLError):
                bulk._batch(
                    conn,
                    lambda: conn.execute("DELETE FROM document WHERE source_id = 'a'"),
                    [("SELECT no_such_function()", ())],
                )
        assert kb.stats().documents == 1  # the first walrus, not undone and alone
        kb.add("a later walrus", source_id="c")
        assert_in_step(kb)
        assert len(kb.search("walrus", mode="keyword")) == 2


def test_a_batch_writes_no_savepoint_journal(tmp_path: Path) -> None:
    """A batch opens no savepoint: inside one, SQLite first copies each page it changes
    to a journal (into a large store, most pages of a batch: two syscalls a page)."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": f"walrus {i}", "source_id": str(i)} for i in range(50)])
        opened: list[str] = []
        conn = _conn(kb)
        conn.raw.trace_v2(apsw.SQLITE_TRACE_STMT, lambda e: opened.append(e["sql"]))
        kb.add_many([{"text": f"walrus {i} again", "source_id": str(i)} for i in range(60)])
        conn.raw.trace_v2(0, None)
        assert opened and not [sql for sql in opened if "SAVEPOINT" in sql.upper()]
        assert_in_step(kb)


def test_schema_11_file_migrates_to_bulk_batches(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        kb.add_many([{"text": f"old walrus {i}"} for i in range(20)])
        # Back to schema 11: per-row triggers, the two indexes no query reads, no table.
        _conn(kb).execute(
            f"{added_trigger_sql()} {written_trigger_sql()} "
            "CREATE TRIGGER chunk_ai AFTER INSERT ON chunk BEGIN "
            "INSERT INTO chunk_fts (rowid, head, text) VALUES (new.id, new.head, new.text); "
            "END; "
            "CREATE TRIGGER chunk_tally_ai AFTER INSERT ON chunk BEGIN "
            "INSERT INTO chunk_tally SELECT d.namespace, "
            "CASE WHEN d.scope = 'session' THEN '=' || d.session_id ELSE '' END, 1 "
            "FROM document d INDEXED BY document_visible WHERE d.id = NEW.doc_id "
            "ON CONFLICT DO UPDATE SET chunks = chunks + 1; END; "
            "CREATE INDEX document_hash ON document (namespace, content_hash); "
            "CREATE INDEX document_updated ON document (namespace, updated_at); "
            "PRAGMA user_version = 11"
        )
    with trove.open(path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION == 16
        assert _insert_triggers(kb) == set()
        names = {
            str(r[0])
            for r in _conn(kb).execute("SELECT name FROM sqlite_schema WHERE type = 'index'")
        }
        assert not names & {"document_hash", "document_updated"}
        kb.add_many([{"text": f"new walrus {i}"} for i in range(20)])
        kb.add("one more walrus")
        assert kb.stats().chunks == 41
        assert len(kb.search("walrus", mode="keyword", limit=100)) == 41
        assert_in_step(kb)


def _insert_triggers(kb: trove.Store) -> set[str]:
    return {
        str(r[0])
        for r in _conn(kb).execute(
            "SELECT name FROM sqlite_schema WHERE type = 'trigger' "
            "AND tbl_name IN ('document', 'chunk') AND sql LIKE '%AFTER INSERT%'"
        )
    }


def test_schema_12_file_migrates_to_no_insert_triggers(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        kb.add_many([{"text": f"old walrus {i}"} for i in range(20)])
        # Back to schema 12: the insert triggers, skipped while bulk_batch holds a row.
        _conn(kb).execute(bulk.BULK_SQL + "PRAGMA user_version = 12")
        assert len(_insert_triggers(kb)) == 4
    with trove.open(path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION == 16
        assert _insert_triggers(kb) == set()
        tables = {str(r[0]) for r in _conn(kb).execute("SELECT name FROM sqlite_schema")}
        assert "bulk_batch" not in tables
        kb.add_many([{"text": f"new walrus {i}"} for i in range(20)])
        kb.add("one more walrus")
        assert kb.stats().chunks == 41
        assert len(kb.search("walrus", mode="keyword", limit=100)) == 41
        assert_in_step(kb)


def test_a_document_put_alone_is_indexed_counted_and_logged(tmp_path: Path) -> None:
    """The backend's one-document writes (``trove migrate``, ``trove import``), which no
    insert trigger follows since schema 13: a new document and its chunks are counted,
    logged and indexed, a rewrite of it is not counted twice."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        backend: Any = kb.backend
        for round_ in range(2):
            doc = kb.writer.prepare({"text": f"lone walrus {round_}", "source_id": "w"})
            doc = kb.writer.plan([doc])[doc.id].doc
            backend.put_document(doc)
            _, ids = backend.replace_chunks(doc.id, kb.writer.chunker.rows(doc))
            assert len(ids) == 1
        assert kb.stats().documents == 1 and kb.stats().chunks == 1
        assert [r.text for r in kb.search("walrus", mode="keyword")] != []
        assert _conn(kb).execute("SELECT count(*) FROM event_log WHERE kind = 'written'") == [(1,)]
        assert_in_step(kb)


def test_a_write_transaction_has_the_large_page_cache_and_gives_it_back(tmp_path: Path) -> None:
    """A batch into a large store dirties more pages than a reader's cache holds, which
    would spill them to the log mid-transaction; a reader keeps the small cache (each
    serving process holds its own), after a commit and after a rollback alike."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        backend = kb.backend

        def cache() -> Any:
            return _conn(kb).execute("PRAGMA cache_size")[0][0]

        assert cache() == -READ_CACHE_KB
        with backend.transaction():
            assert cache() == -WRITE_CACHE_KB
        assert cache() == -READ_CACHE_KB
        with pytest.raises(ZeroDivisionError), backend.transaction():
            assert cache() == -WRITE_CACHE_KB
            _ = 1 / 0
        assert cache() == -READ_CACHE_KB
        kb.add_many([{"text": f"document {i}"} for i in range(3)])
        assert cache() == -READ_CACHE_KB


def test_a_bulk_write_checkpoints_its_log_late_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between a bulk write's batches the log is checkpointed only past the bulk mark (the
    # same index pages are rewritten batch after batch); once the write ends, the log is
    # folded into the file and later writes checkpoint at the ordinary mark again.
    from trove.backends.sqlite import documents

    marks: list[int] = []
    original = documents.put_many

    def spy(conn: Any, *args: Any) -> Any:
        marks.append(conn.execute("PRAGMA wal_autocheckpoint")[0][0])
        return original(conn, *args)

    monkeypatch.setattr(documents, "put_many", spy)
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        assert _conn(kb).execute("PRAGMA wal_autocheckpoint") == [(CHECKPOINT_PAGES,)]
        kb.add_many([{"text": f"note {i} about alpha"} for i in range(30)], batch_size=10)
        assert marks == [BULK_CHECKPOINT_PAGES] * 3
        assert _conn(kb).execute("PRAGMA wal_autocheckpoint") == [(CHECKPOINT_PAGES,)]
        assert Path(f"{path}-wal").stat().st_size == 0  # folded: the store is its file
        kb.add("one more note")
        assert kb.stats().documents == 31
        assert_in_step(kb)
