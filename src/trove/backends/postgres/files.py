"""File state rows of the PostgreSQL backend: what an ingest recorded of each file it
stored (see :mod:`trove.ingest.changes`), one row per (namespace, source, path)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from trove.backends.base import FileState
from trove.backends.postgres.text import esc, unesc

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


class PostgresFiles:
    """Mixin of the PostgreSQL backend: the ``file_stat`` table."""

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def conn(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.rows(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash, file_hash FROM file_stat "
            "WHERE namespace = %s AND source = %s",
            (esc(namespace), esc(source)),
        )
        return {unesc(str(r[0])): FileState.from_columns(r[1:]) for r in rows}

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        """Record (or, for None, forget) what was seen of files, in one transaction."""
        ns, src = esc(namespace), esc(source)
        gone = [(ns, src, esc(path)) for path, st in states.items() if st is None]
        kept = [
            (ns, src, esc(path), *st.columns()) for path, st in states.items() if st is not None
        ]
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
        return [(unesc(str(r[0])), unesc(str(r[1]))) for r in rows]
