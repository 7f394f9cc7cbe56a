"""Cluster rows of the PostgreSQL backend (the rules are in trove.memory.clusters)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from trove.backends.postgres.text import esc, esc_opt, unesc


class PostgresClusters:
    """Mixin of the PostgreSQL backend: clusters and their members."""

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def conn(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def put_cluster(self, cluster_id: str, namespace: str, data: str) -> None:
        with self.transaction(), self.conn() as conn:
            conn.execute(
                "INSERT INTO cluster (id, namespace, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data",
                (esc(cluster_id), esc(namespace), esc(data)),
            )

    def get_cluster(self, cluster_id: str) -> tuple[str, str] | None:
        """(namespace, data) of a cluster."""
        rows = self.rows("SELECT namespace, data FROM cluster WHERE id = %s", (esc(cluster_id),))
        return (unesc(rows[0][0]), unesc(rows[0][1])) if rows else None

    def list_clusters(self, namespace: str) -> list[tuple[str, str]]:
        """(id, data) of a namespace's clusters, by id."""
        rows = self.rows(
            "SELECT id, data FROM cluster WHERE namespace = %s ORDER BY id", (esc(namespace),)
        )
        return [(unesc(r[0]), unesc(r[1])) for r in rows]

    def delete_cluster(self, cluster_id: str) -> bool:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute("DELETE FROM cluster WHERE id = %s", (esc(cluster_id),))
            return bool(cur.rowcount)

    def add_members(self, cluster_id: str, doc_ids: Sequence[str], now: float) -> None:
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO cluster_member (cluster_id, doc_id, added_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [(esc(cluster_id), esc(doc_id), now) for doc_id in doc_ids],
            )

    def remove_members(self, cluster_id: str | None, doc_ids: Sequence[str]) -> int:
        """Remove documents from one cluster (or, for None, from every cluster)."""
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "DELETE FROM cluster_member WHERE (%s::text IS NULL OR cluster_id = %s) "
                "AND doc_id = ANY(%s)",
                (esc_opt(cluster_id), esc_opt(cluster_id), [esc(d) for d in doc_ids]),
            )
            return int(cur.rowcount)

    def cluster_members(self, cluster_id: str) -> list[str]:
        """Member ids, in the order they joined."""
        rows = self.rows(
            "SELECT doc_id FROM cluster_member WHERE cluster_id = %s ORDER BY added_at, doc_id",
            (esc(cluster_id),),
        )
        return [unesc(r[0]) for r in rows]
