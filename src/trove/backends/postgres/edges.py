"""Edges between documents in the PostgreSQL backend (the rules are in trove.memory)."""

from __future__ import annotations

from collections.abc import Sequence

from trove.backends.postgres.connection import Connected
from trove.models import Edge
from trove.timeutil import to_iso


class EdgeStorage(Connected):
    """Mixin of the PostgreSQL backend: typed, weighted edges between documents."""

    def put_edge(self, src: str, dst: str, type: str, weight: float, now: float) -> None:
        with self.transaction(), self.conn() as conn:
            conn.execute(
                "INSERT INTO edge (src, dst, type, weight, created_at) "
                "VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (src, dst, type) DO UPDATE SET weight = excluded.weight",
                (src, dst, type, weight, now),
            )

    def delete_edges(self, src: str, dst: str, type: str | None) -> int:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "DELETE FROM edge WHERE src = %s AND dst = %s AND (%s::text IS NULL OR type = %s)",
                (src, dst, type, type),
            )
            return int(cur.rowcount)

    def edges_of(self, doc_ids: Sequence[str], type: str | None) -> list[Edge]:
        """Edges touching any of ``doc_ids``, in either direction, heaviest first."""
        ids = list(doc_ids)
        rows = self.rows(
            "SELECT src, dst, type, weight, created_at FROM edge "
            "WHERE (src = ANY(%s) OR dst = ANY(%s)) AND (%s::text IS NULL OR type = %s) "
            "ORDER BY weight DESC, created_at, src, dst",
            (ids, ids, type, type),
        )
        return [Edge(str(s), str(d), str(t), float(w), to_iso(c)) for s, d, t, w, c in rows]
