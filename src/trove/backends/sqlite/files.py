"""File state rows of the SQLite backend: what an ingest recorded of each file it stored
(see :mod:`trove.ingest.changes`), one row per (namespace, source, path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from trove.backends.sqlite.connection import Connected

if TYPE_CHECKING:
    from trove.backends import file_state
    from trove.backends.file_state import FileState
else:  # at the first ingest that reads them: opening a store makes neither dataclass
    from trove.lazy import LazyModule

    file_state = LazyModule("trove.backends.file_state")

# Schema 10: one table for file state. The stat columns become optional (a file modified
# too recently has none) and ``file_hash`` takes the hashes kept until then as
# ``ingest.file:["namespace", "source", "path"]`` keys in ``meta``, which go.
FILE_STATE_SQL = """
CREATE TABLE file_state (
    namespace TEXT NOT NULL,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER,
    mtime_ns INTEGER,
    ctime_ns INTEGER,
    content_hash TEXT,
    file_hash TEXT,
    PRIMARY KEY (namespace, source, path)
) STRICT, WITHOUT ROWID;
INSERT INTO file_state (namespace, source, path, size, mtime_ns, ctime_ns, content_hash)
    SELECT namespace, source, path, size, mtime_ns, ctime_ns, content_hash FROM file_stat;
DROP TABLE file_stat;
ALTER TABLE file_state RENAME TO file_stat;
INSERT INTO file_stat (namespace, source, path, file_hash)
    SELECT json_extract(substr(key, 13), '$[0]'), json_extract(substr(key, 13), '$[1]'),
        json_extract(substr(key, 13), '$[2]'), value
    FROM meta WHERE substr(key, 1, 12) = 'ingest.file:'
    ON CONFLICT DO UPDATE SET file_hash = excluded.file_hash;
DELETE FROM meta WHERE substr(key, 1, 12) = 'ingest.file:';
"""


class FileStorage(Connected):
    """Mixin of the SQLite backend: what ingest keeps of a source's files (the
    ``file_stat`` table) and the content hashes of a source's documents."""

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.conn.execute(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = ? AND source = ? AND source_id IS NOT NULL",
            (namespace, source),
        )
        return {str(r[0]): (str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash, file_hash FROM file_stat "
            "WHERE namespace = ? AND source = ?",
            (namespace, source),
        )
        return {str(r[0]): file_state.FileState.from_columns(r[1:]) for r in rows}

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        """Record (or, for None, forget) what was seen of files, in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "DELETE FROM file_stat WHERE namespace = ? AND source = ? AND path = ?",
                [(namespace, source, path) for path, st in states.items() if st is None],
            )
            self.conn.executemany(
                "INSERT INTO file_stat "
                "(namespace, source, path, size, mtime_ns, ctime_ns, content_hash, file_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "ctime_ns = excluded.ctime_ns, content_hash = excluded.content_hash, "
                "file_hash = excluded.file_hash",
                [
                    (namespace, source, path, *st.columns())
                    for path, st in states.items()
                    if st is not None
                ],
            )

    def file_sources(self) -> list[tuple[str, str]]:
        """Every (namespace, source) with recorded file state."""
        rows = self.conn.execute(
            "SELECT DISTINCT namespace, source FROM file_stat ORDER BY namespace, source"
        )
        return [(str(r[0]), str(r[1])) for r in rows]
