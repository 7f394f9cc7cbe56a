"""Cluster rows of the PostgreSQL backend (the rules are in trove.memory.clusters)."""

from __future__ import annotations

from collections.abc import Sequence

from trove.backends.postgres.connection import Connected


class ClusterStorage(Connected):
    """Mixin of the PostgreSQL backend: clusters and their members."""

    def put_cluster(self, cluster_id: str, namespace: str, data: str) -> None:
        with self.transaction(), self.conn() as conn:
            conn.execute(
                "INSERT INTO cluster (id, namespace, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data",
                (cluster_id, namespace, data),
            )

    def get_cluster(self, cluster_id: str) -> tuple[str, str] | None:
        """(namespace, data) of a cluster."""
        rows = self.rows("SELECT namespace, data FROM cluster WHERE id = %s", (cluster_id,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def list_clusters(self, namespace: str) -> list[tuple[str, str]]:
        """(id, data) of a namespace's clusters, by id."""
        rows = self.rows(
            "SELECT id, data FROM cluster WHERE namespace = %s ORDER BY id", (namespace,)
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def delete_cluster(self, cluster_id: str) -> bool:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute("DELETE FROM cluster WHERE id = %s", (cluster_id,))
            return bool(cur.rowcount)

    def add_members(self, cluster_id: str, doc_ids: Sequence[str], now: float) -> None:
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO cluster_member (cluster_id, doc_id, added_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [(cluster_id, doc_id, now) for doc_id in doc_ids],
            )

    def remove_members(self, cluster_id: str | None, doc_ids: Sequence[str]) -> int:
        """Remove documents from one cluster (or, for None, from every cluster)."""
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "DELETE FROM cluster_member WHERE (%s::text IS NULL OR cluster_id = %s) "
                "AND doc_id = ANY(%s)",
                (cluster_id, cluster_id, list(doc_ids)),
            )
            return int(cur.rowcount)

    def cluster_members(self, cluster_id: str) -> list[str]:
        """Member ids, in the order they joined."""
        rows = self.rows(
            "SELECT doc_id FROM cluster_member WHERE cluster_id = %s ORDER BY added_at, doc_id",
            (cluster_id,),
        )
        return [str(r[0]) for r in rows]
