"""Edges between documents in the SQLite backend (the rules are in trove.memory)."""

from __future__ import annotations

from collections.abc import Sequence

from trove.backends.sqlite.connection import Connected
from trove.models import Edge
from trove.timeutil import to_iso


class EdgeStorage(Connected):
    """Mixin of the SQLite backend: typed, weighted edges between documents."""

    def put_edge(self, src: str, dst: str, type: str, weight: float, now: float) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO edge (src, dst, type, weight, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (src, dst, type) DO UPDATE SET weight = excluded.weight",
                (src, dst, type, weight, now),
            )

    def delete_edges(self, src: str, dst: str, type: str | None) -> int:
        with self.transaction():
            self.conn.execute(
                "DELETE FROM edge WHERE src = ? AND dst = ? AND (? IS NULL OR type = ?)",
                (src, dst, type, type),
            )
            return int(self.conn.changes())

    def edges_of(self, doc_ids: Sequence[str], type: str | None) -> list[Edge]:
        """Edges touching any of ``doc_ids``, in either direction, heaviest first."""
        marks = ", ".join("?" * len(doc_ids))
        rows = self.conn.execute(
            f"SELECT src, dst, type, weight, created_at FROM edge "
            f"WHERE (src IN ({marks}) OR dst IN ({marks})) AND (? IS NULL OR type = ?) "
            "ORDER BY weight DESC, created_at, src, dst",
            (*doc_ids, *doc_ids, type, type),
        )
        return [Edge(s, d, t, float(w), to_iso(c)) for s, d, t, w, c in rows]
