"""Agent-memory rows of the SQLite backend: edges between documents, paged listing."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from trove.backends.sqlite.connection import SerializedConnection
from trove.backends.sqlite.lifecycle import list_clauses
from trove.models import Document, Edge
from trove.search.filters import Filters
from trove.timeutil import to_iso


class MemoryStorage:
    """Mixin of the SQLite backend: edges and listing."""

    conn: SerializedConnection

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        raise NotImplementedError

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

    def list_documents(
        self,
        namespace: str,
        *,
        scope: Sequence[str],
        session: str | None,
        after: tuple[float, str] | None,
        limit: int,
        include_deleted: bool,
        filters: Filters | None = None,
    ) -> list[Document]:
        """Newest first by (created_at, id); ``after`` is the last item of the previous page."""
        clauses = ["namespace = ?", "(scope != 'session' OR ? IS NULL OR session_id = ?)"]
        params: list[Any] = [namespace, session, session]
        if filters is not None:
            extra, more = list_clauses(filters)
            clauses += extra
            params += more
        if scope:
            clauses.append(f"scope IN ({', '.join('?' * len(scope))})")
            params.extend(scope)
        if not include_deleted:
            clauses.append("deleted_at IS NULL")
        if after is not None:
            clauses.append("(created_at, id) < (?, ?)")
            params.extend(after)
        return self._documents(
            " AND ".join(clauses), params, f"ORDER BY created_at DESC, id DESC LIMIT {int(limit)}"
        )
