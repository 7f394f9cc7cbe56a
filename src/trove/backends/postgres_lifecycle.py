"""Hard deletion of chosen documents in the PostgreSQL backend (purge by id, clear a
namespace); chunks, vectors and edges go with them by ``ON DELETE CASCADE``."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from .postgres_text import esc, unesc


class PostgresLifecycle:
    """Mixin of the PostgreSQL backend: documents removed for good."""

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def conn(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _written(self) -> None:
        raise NotImplementedError

    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove these documents (in any state) for good; returns the ids that existed."""
        with self.transaction(), self.conn() as conn:
            rows = conn.execute(
                "DELETE FROM document WHERE id = ANY(%s) RETURNING id",
                ([esc(i) for i in dict.fromkeys(doc_ids)],),
            ).fetchall()
        self._written()
        return [unesc(str(r[0])) for r in rows]

    def namespace_documents(self, namespace: str) -> list[str]:
        """Ids of every document of a namespace (any scope, deleted and expired too)."""
        rows = self.rows("SELECT id FROM document WHERE namespace = %s", (esc(namespace),))
        return [unesc(str(r[0])) for r in rows]
