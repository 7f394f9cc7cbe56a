"""Listing, the same for both backends: a namespace's documents, newest first, a page at
a time (the clauses are in :mod:`trove.backends.filter_sql`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trove.backends.filter_sql import Dialect, list_clause
from trove.models import Document

if TYPE_CHECKING:  # only in signatures
    from trove.search.filters import Filters


class Listing:
    """Mixin of both backends: paged listing, through the backend's own dialect and its
    read of document rows."""

    dialect: Dialect

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        raise NotImplementedError

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
        where, params = list_clause(
            namespace,
            scope=scope,
            session=session,
            after=after,
            include_deleted=include_deleted,
            filters=filters,
            dialect=self.dialect,
        )
        tail = f"ORDER BY created_at DESC, id DESC LIMIT {int(limit)}"
        return self._documents(where, params, tail)
