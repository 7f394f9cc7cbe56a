"""Counts and sizes of a SQLite store, of the whole file or of one namespace.

Counting rows scans them: at 100k documents ``trove stats`` spent most of its half second
reading every document (its text too, for the byte count). So the file keeps a tally
(``doc_tally``): documents, chunks and text bytes per namespace, session, source, type
and deleted flag, kept in the writer's own transaction on every path that writes a
document or chunk row (a rolled-back write leaves no trace, another process's write is
counted as this one's): by triggers for updates and deletes, and for inserts (none has a
trigger since schema 13) by one statement a batch that every insert runs (bulk.py).
``stats`` reads the few tally rows, then subtracts the documents whose time-to-live has
passed but that are not purged yet: expiry needs no write, so no trigger sees it; an
index of the documents with an expiry time finds those past it (few, and none in a store
without expiry) without a scan.

How a document row counts: a deleted flag per tally row; chunks through their document
(a chunk whose document row is gone counts nowhere, as the join the scan used); a
session-scoped document under ``'=' || session_id`` (``''`` for every other scope), so a
session's view is the rows under ``''`` and under its own key.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from trove.backends.ranking import repeated_share
from trove.backends.sqlite.connection import Connected, SerializedConnection, cache_folder

_SESSION = "CASE WHEN {row}.scope = 'session' THEN '=' || {row}.session_id ELSE '' END"
_DOC_KEY = (
    "{row}.namespace, " + _SESSION + ", {row}.source, {row}.doc_type, {row}.deleted_at IS NOT NULL"
)
_DOC_MATCH = (
    "namespace = {row}.namespace AND session = " + _SESSION + " AND source = {row}.source "
    "AND doc_type = {row}.doc_type AND deleted = ({row}.deleted_at IS NOT NULL)"
)
_CHUNK_MATCH = "namespace = {row}.namespace AND session = " + _SESSION
_CHUNKS = "(SELECT count(*) FROM chunk WHERE doc_id = {row}.id)"
# Schema 16 (in_order.py): a document's chunks by its ``seq``, through their own index.
_CHUNKS_BY_SEQ = "(SELECT count(*) FROM chunk WHERE doc = {row}.seq)"
_BYTES = "length(CAST({row}.text AS BLOB))"


def _add_doc(row: str) -> str:
    return (
        f"INSERT INTO doc_tally VALUES ({_DOC_KEY}, 1, {_BYTES}) ON CONFLICT DO UPDATE "
        "SET docs = docs + 1, text_bytes = text_bytes + excluded.text_bytes;"
    ).format(row=row)


def _subtract_doc(row: str) -> str:
    return (
        f"UPDATE doc_tally SET docs = docs - 1, text_bytes = text_bytes - {_BYTES} "
        f"WHERE {_DOC_MATCH};"
    ).format(row=row)


def _add_chunks(row: str, chunks: str = _CHUNKS) -> str:
    return (
        f"INSERT INTO chunk_tally VALUES ({{row}}.namespace, {_SESSION}, {chunks}) "
        "ON CONFLICT DO UPDATE SET chunks = chunks + excluded.chunks;"
    ).format(row=row)


def _subtract_chunks(row: str, chunks: str = _CHUNKS) -> str:
    return f"UPDATE chunk_tally SET chunks = chunks - {chunks} WHERE {_CHUNK_MATCH};".format(
        row=row
    )


def _moved(old: str, new: str) -> str:
    """A document row's (namespace, session) key, or its id, changed."""
    return (
        f"{old}.id IS NOT {new}.id OR {old}.namespace IS NOT {new}.namespace "
        f"OR {_SESSION.format(row=old)} IS NOT {_SESSION.format(row=new)}"
    )


def added_trigger_sql(when: str = "") -> str:
    """The trigger that counts a new document (``when``: its condition, schema 12)."""
    return (
        f"CREATE TRIGGER IF NOT EXISTS doc_tally_ai AFTER INSERT ON document {when} "
        f"BEGIN {_add_doc('NEW')} {_add_chunks('NEW')} END;"
    )


# What that trigger does, for the document rows after rowid ?1 (a bulk batch's, bulk.py):
# but for the count of their chunks, none yet (foreign keys hold; a batch writes chunks
# after their documents, counted on their own), which would be a random look-up a
# document in a large store.
ADDED_SQL = (
    f"INSERT INTO doc_tally SELECT {_DOC_KEY}, count(*), sum({_BYTES}) FROM document {{row}} "
    "WHERE {row}.rowid > ?1 GROUP BY 1, 2, 3, 4, 5 ON CONFLICT DO UPDATE "
    "SET docs = docs + excluded.docs, text_bytes = text_bytes + excluded.text_bytes"
).format(row="d")


# Schema 11 (schema.py runs it): the tallies, their triggers, and the tallies filled from
# the rows already there. Idempotent: a file whose version was set back recounts.
# Documents by their whole key; chunks by namespace and session only (stats counts them in
# every state), so a chunk's trigger reads its document's key from the covering index
# document_visible, never the row (whose later columns sit past the text). A document's
# delete is counted BEFORE it: a foreign-key cascade deletes its chunks after the row is
# gone, when their trigger no longer finds the document (and counts nothing).
TALLY_SQL = f"""
CREATE TABLE IF NOT EXISTS doc_tally (
    namespace TEXT NOT NULL,
    session TEXT NOT NULL,
    source TEXT NOT NULL,
    doc_type TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    docs INTEGER NOT NULL,
    text_bytes INTEGER NOT NULL,
    PRIMARY KEY (namespace, session, source, doc_type, deleted)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_tally (
    namespace TEXT NOT NULL,
    session TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    PRIMARY KEY (namespace, session)
) STRICT, WITHOUT ROWID;
{added_trigger_sql()}
CREATE TRIGGER IF NOT EXISTS doc_tally_bd BEFORE DELETE ON document
BEGIN {_subtract_doc("OLD")} {_subtract_chunks("OLD")} END;
CREATE TRIGGER IF NOT EXISTS doc_tally_au
AFTER UPDATE OF id, namespace, scope, session_id, source, doc_type, deleted_at, text
ON document BEGIN {_subtract_doc("OLD")} {_add_doc("NEW")} END;
CREATE TRIGGER IF NOT EXISTS chunk_tally_au AFTER UPDATE OF id, namespace, scope, session_id
ON document WHEN {_moved("OLD", "NEW")}
BEGIN {_subtract_chunks("OLD")} {_add_chunks("NEW")} END;
CREATE TRIGGER IF NOT EXISTS chunk_tally_ai AFTER INSERT ON chunk BEGIN
    INSERT INTO chunk_tally SELECT d.namespace, {_SESSION.format(row="d")}, 1
    FROM document d INDEXED BY document_visible WHERE d.id = NEW.doc_id
    ON CONFLICT DO UPDATE SET chunks = chunks + 1;
END;
CREATE TRIGGER IF NOT EXISTS chunk_tally_ad AFTER DELETE ON chunk BEGIN
    UPDATE chunk_tally SET chunks = chunks - 1 WHERE (namespace, session) =
    (SELECT d.namespace, {_SESSION.format(row="d")} FROM document d INDEXED BY document_visible
    WHERE d.id = OLD.doc_id);
END;
DELETE FROM doc_tally;
INSERT INTO doc_tally
    SELECT {_DOC_KEY.format(row="d")}, count(*), coalesce(sum({_BYTES.format(row="d")}), 0)
    FROM document d GROUP BY 1, 2, 3, 4, 5;
DELETE FROM chunk_tally;
INSERT INTO chunk_tally
    SELECT d.namespace, {_SESSION.format(row="d")}, count(*)
    FROM chunk c JOIN document d ON d.id = c.doc_id GROUP BY 1, 2;
-- Documents that can expire and are not deleted: what stats subtracts once they have.
CREATE INDEX IF NOT EXISTS document_expiry ON document (expires_at)
    WHERE expires_at IS NOT NULL AND deleted_at IS NULL;
"""
# Schema 16 (in_order.py): the triggers of schema 11 that find a document's chunks, or a
# chunk's document, by the text id, now by ``seq`` (``chunk.doc``); the same counts.
IN_ORDER_TALLY_SQL = f"""
DROP TRIGGER IF EXISTS doc_tally_bd;
DROP TRIGGER IF EXISTS chunk_tally_au;
DROP TRIGGER IF EXISTS chunk_tally_ad;
CREATE TRIGGER doc_tally_bd BEFORE DELETE ON document
BEGIN {_subtract_doc("OLD")} {_subtract_chunks("OLD", _CHUNKS_BY_SEQ)} END;
CREATE TRIGGER chunk_tally_au AFTER UPDATE OF id, namespace, scope, session_id
ON document WHEN {_moved("OLD", "NEW")}
BEGIN {_subtract_chunks("OLD", _CHUNKS_BY_SEQ)} {_add_chunks("NEW", _CHUNKS_BY_SEQ)} END;
CREATE TRIGGER chunk_tally_ad AFTER DELETE ON chunk BEGIN
    UPDATE chunk_tally SET chunks = chunks - 1 WHERE (namespace, session) =
    (SELECT d.namespace, {_SESSION.format(row="d")} FROM document d INDEXED BY document_visible
    WHERE d.seq = OLD.doc);
END;
"""


_MINE = "(?1 IS NULL OR namespace = ?1) AND (?2 IS NULL OR session = '' OR session = '=' || ?2)"
_DOCS = (
    "SELECT namespace, source, doc_type, deleted, sum(docs), sum(text_bytes) "
    f"FROM doc_tally WHERE {_MINE} AND ?3 IS NOT NULL GROUP BY 1, 2, 3, 4"
)
_CHUNK_COUNT = f"SELECT coalesce(sum(chunks), 0) FROM chunk_tally WHERE {_MINE} AND ?3 IS NOT NULL"
_EXPIRED = (
    "SELECT namespace, source, doc_type, count(*) FROM document INDEXED BY document_expiry "
    "WHERE expires_at IS NOT NULL AND deleted_at IS NULL AND expires_at <= ?3 "
    "AND (?1 IS NULL OR namespace = ?1) "
    "AND (?2 IS NULL OR scope != 'session' OR session_id = ?2) GROUP BY 1, 2, 3"
)


# The chunks (a deleted document's too) and the live documents of the store.
_REPEATS = (
    "SELECT (SELECT total(chunks) FROM chunk_tally), "
    "(SELECT total(docs) FROM doc_tally WHERE deleted = 0)"
)


def chunk_repeats(conn: SerializedConnection) -> float:
    """The share of the store's chunks that add no document to a ranking (what a
    search's first window allows for: ranking.repeated_share), read from the tallies."""
    chunks, documents = conn.execute(_REPEATS)[0]
    return repeated_share(int(chunks), int(documents))


class Statistics(Connected):
    """Mixin of the SQLite backend: statistics."""

    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Counts and sizes, of the whole file or of one namespace (and session, if given:
        other sessions' items are not counted)."""
        args = (namespace, session, now)
        live: Counter[tuple[str, str, str]] = Counter()
        text_bytes = deleted = 0
        for ns, source, doc_type, gone, docs, in_bytes in self.conn.execute(_DOCS, args):
            text_bytes += int(in_bytes)
            if gone:
                deleted += int(docs)
            else:
                live[(str(ns), str(source), str(doc_type))] += int(docs)
        expired = 0
        for ns, source, doc_type, count in self.conn.execute(_EXPIRED, args):
            live[(str(ns), str(source), str(doc_type))] -= int(count)
            expired += int(count)
        size = cached = 0
        if not self.memory and namespace is None:
            size = sum(
                os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p)
            )
            cached = _folder_bytes(cache_folder(self.path))
        return {
            "documents": sum(live.values()),
            "chunks": int(self.conn.execute(_CHUNK_COUNT, args)[0][0]),
            "deleted": deleted,
            "expired": expired,
            "by_source": _grouped(live, 1),
            "by_doc_type": _grouped(live, 2),
            "by_namespace": _grouped(live, 0),
            "text_bytes": text_bytes,
            "file_bytes": size,
            "cache_bytes": cached,
            "schema_version": int(self._scalar("PRAGMA user_version")),
        }


def _folder_bytes(folder: str) -> int:
    """The size of the files in ``folder`` (0 if there is none)."""
    try:
        with os.scandir(folder) as entries:
            return sum(e.stat().st_size for e in entries if e.is_file(follow_symlinks=False))
    except OSError:  # no cache yet, or a file that went while it was listed
        return 0


def _grouped(live: Counter[tuple[str, str, str]], part: int) -> dict[str, int]:
    """Live documents by one part of the key, the largest group first."""
    counts: Counter[str] = Counter()
    for key, n in live.items():
        counts[key[part]] += n
    return dict(sorted(((k, n) for k, n in counts.items() if n > 0), key=lambda kn: -kn[1]))
