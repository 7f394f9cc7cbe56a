"""Originals in PostgreSQL: content-addressed, as ``bytea`` rows of 1 MiB pieces.

Pieces rather than one ``bytea`` value, so a large original moves in and out a piece at
a time (one value is sent and received whole); ``bytea`` rather than large objects, so
the bytes are ordinary rows of the schema: removed by the same triggers and cascades as
everything else, dumped with ``pg_dump -n schema``, no ``lo_unlink`` to forget.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO

from trove.backends.postgres.connection import Connected
from trove.originals import PIECE, OriginalInfo

M005 = """
CREATE TABLE original_blob (
    hash text PRIMARY KEY,
    size bigint NOT NULL
);
CREATE TABLE original_piece (
    hash text NOT NULL REFERENCES original_blob (hash) ON DELETE CASCADE,
    idx integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (hash, idx)
);
CREATE TABLE document_original (
    doc_id text PRIMARY KEY REFERENCES document (id) ON DELETE CASCADE,
    hash text NOT NULL,
    name text NOT NULL DEFAULT '',
    media_type text NOT NULL DEFAULT 'application/octet-stream'
);
CREATE INDEX document_original_hash ON document_original (hash);
-- A blob goes with its last reference, on every path that removes a document.
CREATE FUNCTION original_unreferenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM document_original WHERE hash = OLD.hash) THEN
        DELETE FROM original_blob WHERE hash = OLD.hash;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER original_blob_unreferenced AFTER DELETE OR UPDATE OF hash
    ON document_original FOR EACH ROW EXECUTE FUNCTION original_unreferenced();
"""


class OriginalStorage(Connected):
    """The PostgreSQL backend's originals (mixed into :class:`PostgresBackend`)."""

    def put_original(
        self, doc_id: str, digest: str, size: int, source: IO[bytes], name: str, media_type: str
    ) -> None:
        with self.transaction(), self.conn() as conn:
            created = conn.execute(
                "INSERT INTO original_blob (hash, size) VALUES (%s, %s) "
                "ON CONFLICT (hash) DO NOTHING RETURNING hash",
                (digest, size),
            ).fetchone()
            if created is not None:
                idx = 0
                while piece := source.read(PIECE):
                    conn.execute(
                        "INSERT INTO original_piece (hash, idx, data) VALUES (%s, %s, %s)",
                        (digest, idx, piece),
                    )
                    idx += 1
            conn.execute(
                "INSERT INTO document_original (doc_id, hash, name, media_type) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (doc_id) DO UPDATE SET "
                "hash = excluded.hash, name = excluded.name, media_type = excluded.media_type",
                (doc_id, digest, name, media_type),
            )

    def original_info(self, doc_id: str) -> OriginalInfo | None:
        row = self.one(
            "SELECT o.hash, o.name, o.media_type, b.size FROM document_original o "
            "JOIN original_blob b ON b.hash = o.hash WHERE o.doc_id = %s",
            (doc_id,),
        )
        if row is None:
            return None
        return OriginalInfo(doc_id, str(row[0]), str(row[1]), str(row[2]), int(row[3]))

    def original_pieces(self, digest: str, piece: int = PIECE) -> Iterator[bytes]:
        idx = 0
        while True:
            row = self.one(
                "SELECT data FROM original_piece WHERE hash = %s AND idx = %s", (digest, idx)
            )
            if row is None:
                return
            yield bytes(row[0])
            idx += 1

    def with_originals(self, doc_ids: Sequence[str]) -> set[str]:
        """Which of these documents have an original (one statement)."""
        sql = "SELECT doc_id FROM document_original WHERE doc_id = ANY(%s)"
        return {str(row[0]) for row in self.rows(sql, (list(doc_ids),))}

    def original_hashes(self) -> dict[str, int]:
        return {str(h): int(s) for h, s in self.rows("SELECT hash, size FROM original_blob")}
