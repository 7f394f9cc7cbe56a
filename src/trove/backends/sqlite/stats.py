"""Counts and sizes of a SQLite store, of the whole file or of one namespace."""

from __future__ import annotations

import os
from typing import Any

from trove.backends.sqlite.connection import Connected


class Statistics(Connected):
    """Mixin of the SQLite backend: statistics."""

    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Counts and sizes, of the whole file or of one namespace (and session, if given:
        other sessions' items are not counted)."""
        mine = (
            "(?1 IS NULL OR namespace = ?1) "
            "AND (?3 IS NULL OR scope != 'session' OR session_id = ?3)"
        )
        live = f"{mine} AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)"
        args = (namespace, now, session)

        def count(where: str) -> int:
            return int(self._scalar(f"SELECT count(*) FROM document WHERE {where}", args))

        def grouped(column: str) -> dict[str, int]:
            sql = (
                f"SELECT {column}, count(*) FROM document WHERE {live} GROUP BY 1 ORDER BY 2 DESC"
            )
            return {str(k): int(n) for k, n in self.conn.execute(sql, args)}

        size = 0
        if not self.memory and namespace is None:
            size = sum(
                os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p)
            )
        chunks = self._scalar(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (?1 IS NULL OR d.namespace = ?1) AND ?2 IS NOT NULL "
            "AND (?3 IS NULL OR d.scope != 'session' OR d.session_id = ?3)",
            args,
        )
        text_bytes = self._scalar(
            "SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM document "
            f"WHERE {mine} AND ?2 IS NOT NULL",
            args,
        )
        return {
            "documents": count(live),
            "chunks": int(chunks),
            "deleted": count(f"{mine} AND deleted_at IS NOT NULL AND ?2 IS NOT NULL"),
            "expired": count(
                f"{mine} AND deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?2"
            ),
            "by_source": grouped("source"),
            "by_doc_type": grouped("doc_type"),
            "by_namespace": grouped("namespace"),
            "text_bytes": int(text_bytes),
            "file_bytes": size,
            "schema_version": int(self._scalar("PRAGMA user_version")),
        }
