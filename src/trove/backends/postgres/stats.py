"""Counts and sizes of a PostgreSQL store, of the whole schema or of one namespace."""

from __future__ import annotations

from typing import Any

from trove.backends.postgres.connection import Connected
from trove.backends.postgres.schema import current_version


class Statistics(Connected):
    """Mixin of the PostgreSQL backend: statistics."""

    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Counts and sizes, of the whole schema or of one namespace (and session, if
        given: other sessions' items are not counted)."""
        mine = (
            "(%(ns)s::text IS NULL OR namespace = %(ns)s) AND (%(session)s::text IS NULL "
            "OR scope <> 'session' OR session_id = %(session)s)"
        )
        live = f"{mine} AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
        args = {"ns": namespace, "now": now, "session": session}

        def count(where: str) -> int:
            row = self.one(f"SELECT count(*) FROM document WHERE {where}", args)
            return int(row[0]) if row else 0

        def grouped(column: str) -> dict[str, int]:
            query = (
                f"SELECT {column}, count(*) FROM document WHERE {live} GROUP BY 1 ORDER BY 2 DESC"
            )
            return {str(k): int(n) for k, n in self.rows(query, args)}

        chunks = self.one(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (%(ns)s::text IS NULL OR d.namespace = %(ns)s) AND (%(session)s::text IS NULL "
            "OR d.scope <> 'session' OR d.session_id = %(session)s)",
            args,
        )
        text_bytes = self.one(
            f"SELECT coalesce(sum(text_bytes), 0) FROM document WHERE {mine}", args
        )
        size = 0
        if namespace is None:
            row = self.one(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
                (self.schema,),
            )
            size = int(row[0]) if row else 0
        with self.conn() as conn:
            version = current_version(conn, self.schema)
        return {
            "documents": count(live),
            "chunks": int(chunks[0]) if chunks else 0,
            "deleted": count(f"{mine} AND deleted_at IS NOT NULL"),
            "expired": count(
                f"{mine} AND deleted_at IS NULL AND expires_at IS NOT NULL "
                "AND expires_at <= %(now)s"
            ),
            "by_source": grouped("source"),
            "by_doc_type": grouped("doc_type"),
            "by_namespace": grouped("namespace"),
            "text_bytes": int(text_bytes[0]) if text_bytes else 0,
            "file_bytes": size,
            "schema_version": version,
        }
