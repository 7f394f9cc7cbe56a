"""What ingest keeps of a source's files in the PostgreSQL backend: content hashes by
source id, and each file's stat (size, times, hash)."""

from __future__ import annotations

from collections.abc import Mapping

from trove.backends.base import FileStat
from trove.backends.postgres.connection import Connected


class FileStorage(Connected):
    """Mixin of the PostgreSQL backend: file state for ingest."""

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.rows(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = %s AND source = %s AND source_id IS NOT NULL",
            (namespace, source),
        )
        return {str(r[0]): (str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def file_stats(self, namespace: str, source: str) -> dict[str, FileStat]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.rows(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash FROM file_stat "
            "WHERE namespace = %s AND source = %s",
            (namespace, source),
        )
        return {str(r[0]): FileStat(int(r[1]), int(r[2]), int(r[3]), str(r[4])) for r in rows}

    def set_file_stats(
        self, namespace: str, source: str, stats: Mapping[str, FileStat | None]
    ) -> None:
        """Record (or, for None, forget) files' stats, in one transaction."""
        gone = [(namespace, source, path) for path, st in stats.items() if st is None]
        kept = [
            (namespace, source, path, st.size, st.mtime_ns, st.ctime_ns, st.content_hash)
            for path, st in stats.items()
            if st is not None
        ]
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            if gone:
                cur.executemany(
                    "DELETE FROM file_stat WHERE namespace = %s AND source = %s AND path = %s",
                    gone,
                )
            if kept:
                cur.executemany(
                    "INSERT INTO file_stat "
                    "(namespace, source, path, size, mtime_ns, ctime_ns, content_hash) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (namespace, source, path) DO UPDATE SET size = excluded.size, "
                    "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, "
                    "content_hash = excluded.content_hash",
                    kept,
                )
