"""The event log of a SQLite store: what changed, written by triggers on ``document``
(and, for new documents, since schema 13, by one statement a batch that every insert
runs: bulk.py); and what was read (``retrieved``), by stores opened with
``record_retrievals``, in batches (:mod:`trove.memory.access`).

A row per committed change, in commit order (``AUTOINCREMENT``: ids are never reused,
so a reader's cursor stays meaningful after old rows are pruned). Only the newest
``KEEP`` rows are kept: a follower that falls further behind misses events, which is
what a live feed means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trove.backends.sqlite.parts import SQLiteParts

KEEP = 10_000
COLUMNS = ("id", "kind", "doc_id", "namespace", "scope", "session_id", "source", "doc_type")
_ROW = (
    "{r}.id, {r}.namespace, {r}.scope, {r}.session_id, {r}.source, {r}.doc_type, "
    "{r}.importance, unixepoch('subsec')"
)
_INSERT = (
    "INSERT INTO event_log (kind, doc_id, namespace, scope, session_id, source, doc_type, "
    "importance, at) VALUES ({kind}, {row}); "
    f"DELETE FROM event_log WHERE id < (SELECT max(id) FROM event_log) - {KEEP};"
)


def written_trigger_sql(when: str = "") -> str:
    """The trigger that logs a new document (``when``: its condition, schema 12)."""
    return f"""CREATE TRIGGER IF NOT EXISTS document_event_ai AFTER INSERT ON document {when}
        BEGIN {_INSERT.format(kind="'written'", row=_ROW.format(r="new"))} END;"""


# What that trigger does, for the document rows after rowid ?1 (a bulk batch's, bulk.py).
WRITTEN_SQL = (
    "INSERT INTO event_log (kind, doc_id, namespace, scope, session_id, source, doc_type, "
    f"importance, at) SELECT 'written', {_ROW.format(r='d')} FROM document d "
    "WHERE d.rowid > ?1 ORDER BY d.rowid",
    f"DELETE FROM event_log WHERE id < (SELECT max(id) FROM event_log) - {KEEP}",
)


# A read (``retrieved``), logged as the stream announces it: one row per document read,
# with the document's own namespace, scope and session, in the order read.
RETRIEVED_SQL = (
    "INSERT INTO event_log (kind, doc_id, namespace, scope, session_id, source, doc_type, "
    f"importance, at) SELECT 'retrieved', {_ROW.format(r='d')} FROM document d WHERE d.id = ?",
    f"DELETE FROM event_log WHERE id < (SELECT max(id) FROM event_log) - {KEEP}",
)


def event_log_sql() -> str:
    """The table and the triggers that fill it (migration 7)."""
    changed = (
        "CASE WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL THEN 'deleted' "
        "WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL THEN 'restored' "
        "ELSE 'updated' END"
    )
    return f"""
        CREATE TABLE IF NOT EXISTS event_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            source TEXT NOT NULL,
            doc_type TEXT NOT NULL,
            importance REAL,
            at REAL NOT NULL
        ) STRICT;
        {written_trigger_sql()}
        -- Only what a writer changes: bookkeeping columns (access counts) are no event.
        CREATE TRIGGER IF NOT EXISTS document_event_au AFTER UPDATE ON document
        WHEN old.updated_at IS NOT new.updated_at OR old.deleted_at IS NOT new.deleted_at
        BEGIN
            {_INSERT.format(kind=changed, row=_ROW.format(r="new"))}
        END;
        CREATE TRIGGER IF NOT EXISTS document_event_ad AFTER DELETE ON document BEGIN
            {_INSERT.format(kind="'purged'", row=_ROW.format(r="old"))}
        END;
    """


class EventLog:
    """Reads a SQLite store's event log (through the backend's one connection)."""

    def __init__(self, backend: SQLiteParts) -> None:
        self.backend = backend

    @property
    def writable(self) -> bool:
        return not self.backend.conn.read_only

    def append_retrieved(self, doc_ids: Sequence[str]) -> None:
        """Log reads of these documents (``retrieved``), in order, in one transaction."""
        if not doc_ids:
            return
        insert, prune = RETRIEVED_SQL
        with self.backend.transaction():
            self.backend.conn.executemany(insert, [(doc_id,) for doc_id in doc_ids])
            self.backend.conn.execute(prune)

    def last_id(self) -> int:
        rows = self.backend.conn.execute("SELECT coalesce(max(id), 0) FROM event_log")
        return int(rows[0][0])

    def after(self, cursor: int, limit: int = 500) -> list[dict[str, Any]]:
        """Events with an id above ``cursor``, oldest first."""
        rows = self.backend.conn.execute(
            "SELECT id, kind, doc_id, namespace, scope, session_id, source, doc_type, "
            "importance, at FROM event_log WHERE id > ? ORDER BY id LIMIT ?",
            (cursor, limit),
        )
        return [
            {
                "seq": row[0],
                "kind": row[1],
                "id": row[2],
                "namespace": row[3],
                "scope": row[4],
                "session_id": row[5],
                "source": row[6],
                "doc_type": row[7],
                "importance": row[8],
                "at": row[9],
            }
            for row in rows
        ]
