"""What ingest keeps of a source's files in the SQLite backend: content hashes by
source id, and each file's stat (size, times, hash)."""

from __future__ import annotations

from collections.abc import Mapping

from trove.backends.base import FileStat
from trove.backends.sqlite.connection import Connected


class FileStorage(Connected):
    """Mixin of the SQLite backend: file state for ingest."""

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.conn.execute(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = ? AND source = ? AND source_id IS NOT NULL",
            (namespace, source),
        )
        return {str(r[0]): (str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def file_stats(self, namespace: str, source: str) -> dict[str, FileStat]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash FROM file_stat "
            "WHERE namespace = ? AND source = ?",
            (namespace, source),
        )
        return {str(r[0]): FileStat(int(r[1]), int(r[2]), int(r[3]), str(r[4])) for r in rows}

    def set_file_stats(
        self, namespace: str, source: str, stats: Mapping[str, FileStat | None]
    ) -> None:
        """Record (or, for None, forget) files' stats, in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "DELETE FROM file_stat WHERE namespace = ? AND source = ? AND path = ?",
                [(namespace, source, path) for path, st in stats.items() if st is None],
            )
            self.conn.executemany(
                "INSERT INTO file_stat "
                "(namespace, source, path, size, mtime_ns, ctime_ns, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET size = excluded.size, "
                "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, "
                "content_hash = excluded.content_hash",
                [
                    (namespace, source, path, st.size, st.mtime_ns, st.ctime_ns, st.content_hash)
                    for path, st in stats.items()
                    if st is not None
                ],
            )
