"""File state rows of the PostgreSQL backend: what an ingest recorded of each file it
stored (see :mod:`trove.ingest.changes`), one row per (namespace, source, path)."""

from __future__ import annotations

from collections.abc import Mapping

from trove.backends.file_state import FileState
from trove.backends.postgres.connection import Connected

# Schema 6: one table for file state, as SQLite's schema 10. The stat columns become
# optional and ``file_hash`` takes the ``ingest.file:`` hashes of ``meta``, which go (a
# key holding an escaped NUL, which jsonb refuses, is dropped: its file is read again).
M006 = """
ALTER TABLE file_stat
    ALTER COLUMN size DROP NOT NULL,
    ALTER COLUMN mtime_ns DROP NOT NULL,
    ALTER COLUMN ctime_ns DROP NOT NULL,
    ALTER COLUMN content_hash DROP NOT NULL,
    ADD COLUMN file_hash text;
INSERT INTO file_stat (namespace, source, path, file_hash)
    SELECT k ->> 0, k ->> 1, k ->> 2, value
    FROM (
        SELECT substr(key, 13)::jsonb AS k, value FROM meta
        WHERE left(key, 12) = 'ingest.file:' AND strpos(key, '\\u0000') = 0
    ) AS old
    ON CONFLICT (namespace, source, path) DO UPDATE SET file_hash = excluded.file_hash;
DELETE FROM meta WHERE left(key, 12) = 'ingest.file:';
"""


class FileStorage(Connected):
    """Mixin of the PostgreSQL backend: what ingest keeps of a source's files (the
    ``file_stat`` table) and the content hashes of a source's documents."""

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.rows(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = %s AND source = %s AND source_id IS NOT NULL",
            (namespace, source),
        )
        return {str(r[0]): (str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.rows(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash, file_hash FROM file_stat "
            "WHERE namespace = %s AND source = %s",
            (namespace, source),
        )
        return {str(r[0]): FileState.from_columns(r[1:]) for r in rows}

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        """Record (or, for None, forget) what was seen of files, in one transaction."""
        ns, src = namespace, source
        gone = [(ns, src, path) for path, st in states.items() if st is None]
        kept = [(ns, src, path, *st.columns()) for path, st in states.items() if st is not None]
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            if gone:
                cur.executemany(
                    "DELETE FROM file_stat WHERE namespace = %s AND source = %s AND path = %s",
                    gone,
                )
            if kept:
                cur.executemany(
                    "INSERT INTO file_stat (namespace, source, path, size, mtime_ns, "
                    "ctime_ns, content_hash, file_hash) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (namespace, source, path) DO UPDATE SET size = excluded.size, "
                    "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, "
                    "content_hash = excluded.content_hash, file_hash = excluded.file_hash",
                    kept,
                )

    def file_sources(self) -> list[tuple[str, str]]:
        """Every (namespace, source) with recorded file state."""
        rows = self.rows(
            "SELECT DISTINCT namespace, source FROM file_stat ORDER BY namespace, source"
        )
        return [(str(r[0]), str(r[1])) for r in rows]
