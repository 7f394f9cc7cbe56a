"""Originals in SQLite: content-addressed blobs, written and read in pieces.

A blob is written with ``zeroblob`` and filled through apsw's incremental blob I/O, and
read back the same way, so a 200 MB original never sits whole in memory (the caller's
bytes aside). One row per distinct content (its SHA-256); ``document_original`` says
which document holds which, and triggers drop a blob with its last reference.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

import apsw

from trove.backends.sqlite.connection import Connected

if TYPE_CHECKING:
    from trove import originals
    from trove.originals import OriginalInfo
else:  # its dataclasses and io load at the first original asked for (not to count a store)
    from trove.lazy import LazyModule

    originals = LazyModule("trove.originals")

# trove.originals.PIECE spelled out (tests/coldstart/test_imports.py checks that they agree).
PIECE = 1 << 20

ORIGINALS_SQL = """
CREATE TABLE IF NOT EXISTS original_blob (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS document_original (
    doc_id TEXT PRIMARY KEY REFERENCES document (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    media_type TEXT NOT NULL DEFAULT 'application/octet-stream'
) STRICT;
CREATE INDEX IF NOT EXISTS document_original_hash ON document_original (hash);
-- Explicit rather than relying on the foreign key: a connection without
-- PRAGMA foreign_keys (another tool) must not leave a reference to nothing.
CREATE TRIGGER IF NOT EXISTS document_original_gone AFTER DELETE ON document
BEGIN
    DELETE FROM document_original WHERE doc_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS original_blob_unreferenced AFTER DELETE ON document_original
WHEN NOT EXISTS (SELECT 1 FROM document_original WHERE hash = OLD.hash)
BEGIN
    DELETE FROM original_blob WHERE hash = OLD.hash;
END;
CREATE TRIGGER IF NOT EXISTS original_blob_replaced AFTER UPDATE OF hash ON document_original
WHEN OLD.hash <> NEW.hash
    AND NOT EXISTS (SELECT 1 FROM document_original WHERE hash = OLD.hash)
BEGIN
    DELETE FROM original_blob WHERE hash = OLD.hash;
END;
"""


class OriginalStorage(Connected):
    """The SQLite backend's originals (mixed into :class:`SQLiteBackend`)."""

    def put_original(
        self, doc_id: str, digest: str, size: int, source: IO[bytes], name: str, media_type: str
    ) -> None:
        """Attach an original to ``doc_id``; its bytes are read from ``source`` only when no
        blob with ``digest`` is stored yet."""
        with self.transaction():
            if not self.conn.execute("SELECT 1 FROM original_blob WHERE hash = ?", (digest,)):
                self.conn.execute(
                    "INSERT INTO original_blob (hash, size, data) VALUES (?, ?, zeroblob(?))",
                    (digest, size, size),
                )
                rowid = self.conn.last_insert_rowid()
                with self.conn.lock:
                    blob = self.conn.raw.blob_open("main", "original_blob", "data", rowid, True)
                    with blob:
                        _fill(blob, source, size)
            self.conn.execute(
                "INSERT INTO document_original (doc_id, hash, name, media_type) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (doc_id) DO UPDATE SET "
                "hash = excluded.hash, name = excluded.name, media_type = excluded.media_type",
                (doc_id, digest, name, media_type),
            )

    def original_info(self, doc_id: str) -> OriginalInfo | None:
        rows = self.conn.execute(
            "SELECT o.hash, o.name, o.media_type, b.size FROM document_original o "
            "JOIN original_blob b ON b.hash = o.hash WHERE o.doc_id = ?",
            (doc_id,),
        )
        if not rows:
            return None
        digest, name, media_type, size = rows[0]
        return originals.OriginalInfo(doc_id, str(digest), str(name), str(media_type), int(size))

    def original_pieces(self, digest: str, piece: int = PIECE) -> Iterator[bytes]:
        """The blob's bytes, ``piece`` at a time. Reads under the connection's lock per
        piece, so a slow reader does not hold up other threads for the whole blob."""
        rows = self.conn.execute("SELECT id, size FROM original_blob WHERE hash = ?", (digest,))
        if not rows:
            return
        rowid, size = int(rows[0][0]), int(rows[0][1])
        offset = 0
        while offset < size:
            with self.conn.lock:
                try:
                    blob = self.conn.raw.blob_open("main", "original_blob", "data", rowid, False)
                except apsw.Error:  # removed meanwhile (purged): what was sent is all
                    return
                with blob:
                    blob.seek(offset)
                    data = blob.read(min(piece, size - offset))
            if not data:
                return
            offset += len(data)
            yield data

    def with_originals(self, doc_ids: Sequence[str]) -> set[str]:
        """Which of these documents have an original (500 ids a statement)."""
        found: set[str] = set()
        for start in range(0, len(doc_ids), 500):
            part = tuple(doc_ids[start : start + 500])
            marks = ", ".join("?" * len(part))
            sql = f"SELECT doc_id FROM document_original WHERE doc_id IN ({marks})"
            found.update(str(row[0]) for row in self.conn.execute(sql, part))
        return found

    def original_hashes(self) -> dict[str, int]:
        """Every stored blob's hash and size (for checks and tests)."""
        return {
            str(h): int(s) for h, s in self.conn.execute("SELECT hash, size FROM original_blob")
        }


def _fill(blob: apsw.Blob, source: IO[bytes], size: int) -> None:
    written = 0
    while written < size:
        data = source.read(min(PIECE, size - written))
        if not data:
            raise ValueError("the original changed while it was being stored (shorter)")
        blob.write(data)
        written += len(data)
