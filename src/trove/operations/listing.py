"""What a namespace holds: its documents a page at a time (:meth:`Store.list`, with its
cursor) and its counts (:meth:`Store.stats`).

A cursor is the last listed document's (created_at, id), base64 JSON: opaque to callers,
stable across writes (a page never repeats or skips a document that was there before).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trove.backends.base import Backend
from trove.errors import InvalidQuery
from trove.models import Document, Page, Stats
from trove.timeutil import now, to_epoch

if TYPE_CHECKING:
    import base64

    from trove.search import filters as search_filters
else:  # loaded at the first listed page: counting (trove stats) needs neither (the
    # Filters dataclass costs a fresh process about 4 M instructions)
    from trove.lazy import LazyModule

    base64 = LazyModule("base64")
    search_filters = LazyModule("trove.search.filters")

if TYPE_CHECKING:  # only types: counting (trove stats) loads neither module
    from trove.embedders.vectorizer import Vectorizer
    from trove.expansion_counts import CacheCounts


def page(
    backend: Backend,
    namespace: str,
    *,
    scope: str | Sequence[str] | None,
    session: str | None,
    cursor: str | None,
    limit: int,
    include_deleted: bool,
    **filters: Any,
) -> Page:
    """One page of :meth:`Store.list` (see there)."""
    if not isinstance(limit, int) or not 0 < limit <= 1000:
        raise InvalidQuery("limit must be between 1 and 1000")
    if "metadata" in filters:
        raise InvalidQuery("list does not filter by metadata; search does")
    where = search_filters.Filters.build(namespace=namespace, scope=scope, **filters)
    items = backend.list_documents(
        namespace,
        scope=where.scope,
        session=session,
        after=decode_cursor(cursor) if cursor else None,
        limit=limit,
        include_deleted=include_deleted,
        filters=where,
    )
    last = items[-1] if len(items) == limit else None
    return Page(items, encode_cursor(last) if last else None)


def encode_cursor(doc: Document) -> str:
    payload = json.dumps([to_epoch(doc.created_at), doc.id]).encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        created, doc_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return float(created), str(doc_id)
    except (ValueError, TypeError):
        raise InvalidQuery(f"not a cursor from list(): {cursor!r}") from None


def stats(
    backend: Backend,
    vectorizer: Vectorizer,
    expansion: CacheCounts,
    namespace: str | None,
    session: str | None,
) -> Stats:
    """:meth:`Store.stats` (see there); never loads an embedding model."""
    data = backend.stats(now(), namespace, session)
    lock = backend.vector_lock()
    vectors = backend.vector_count(namespace, session)
    missing = max(0, data["chunks"] - vectors)
    if missing and lock is not None:  # entries kept out of the semantic index lack none
        missing = max(0, missing - backend.chunks_kept_out(namespace, session))
    return Stats(
        **data,
        embedder=None if lock is None else lock.to_dict(),
        vectors=vectors,
        expansion_cache=expansion.to_dict(),
        chunks_without_vectors=missing,
        keyword_only=vectorizer.keyword_only and lock is None,
    )
