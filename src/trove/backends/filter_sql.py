"""Filters as SQL, written once for both backends: which documents a reader sees, and
what a search or a listing filters by. Where the two SQL dialects differ (a parameter's
mark, a list column, a metadata value), a :class:`Dialect` says how; each backend's
``filters.py`` has its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only in signatures: opening a store does not make the Filters dataclass
    from trove.search.filters import Filters


class Dialect:
    """How one backend writes the parts of a filter that differ between SQL dialects."""

    mark = "?"  # a parameter
    text_mark = "?"  # a text parameter that may be NULL (PostgreSQL wants its type)

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``."""
        raise NotImplementedError

    def has_all(self, column: str, values: Sequence[str]) -> tuple[list[str], list[Any]]:
        """The list column ``column`` holds every one of ``values``."""
        raise NotImplementedError

    def metadata_is(self, key: str, value: Any) -> tuple[str, list[Any]]:
        """The document's metadata has ``value`` (a JSON scalar or None) at ``key``."""
        raise NotImplementedError


def filter_clause(filters: Filters, now: float, dialect: Dialect) -> tuple[str, list[Any]]:
    """The WHERE clause (over ``d``, the document) for a search with ``filters``."""
    m, t = dialect.mark, dialect.text_mark
    # A namespace sees its own items (session items only from their session, when the
    # reader has one) and every global item.
    clauses = [
        f"((d.namespace = {m} AND (d.scope <> 'session' OR {t} IS NULL "
        f"OR d.session_id = {m})) OR d.scope = 'global')",
        "d.deleted_at IS NULL",
        f"(d.expires_at IS NULL OR d.expires_at > {m})",
    ]
    params: list[Any] = [filters.namespace, filters.session, filters.session, now]
    if filters.scope:
        _add(clauses, params, dialect.any_of("d.scope", filters.scope))
    _add_fields(clauses, params, filters, dialect, "d.")
    for key, value in filters.metadata:
        _add(clauses, params, dialect.metadata_is(key, value))
    extra, more = memory_clauses(filters, dialect)
    return " AND ".join(clauses + extra), params + more


def list_clause(
    namespace: str,
    *,
    scope: Sequence[str],
    session: str | None,
    after: tuple[float, str] | None,
    include_deleted: bool,
    filters: Filters | None,
    dialect: Dialect,
) -> tuple[str, list[Any]]:
    """The WHERE clause of a page of a namespace's listing (``after``: the last item of the
    previous page, by (created_at, id))."""
    m, t = dialect.mark, dialect.text_mark
    clauses = [f"namespace = {m}", f"(scope <> 'session' OR {t} IS NULL OR session_id = {m})"]
    params: list[Any] = [namespace, session, session]
    if filters is not None:
        extra, more = memory_clauses(filters, dialect, "")
        clauses += extra
        params += more
        _add_fields(clauses, params, filters, dialect, "")
    if scope:
        _add(clauses, params, dialect.any_of("scope", scope))
    if not include_deleted:
        clauses.append("deleted_at IS NULL")
    if after is not None:
        clauses.append(f"(created_at, id) < ({m}, {m})")
        params.extend(after)
    return " AND ".join(clauses), params


def memory_clauses(
    filters: Filters, dialect: Dialect, alias: str = "d."
) -> tuple[list[str], list[Any]]:
    """SQL for the memory filters (entities, importance, confidence, compression)."""
    m = dialect.mark
    clauses, params = dialect.has_all(f"{alias}entities", filters.entities)
    for column, op, value in (
        ("importance", ">=", filters.min_importance),
        ("confidence", ">=", filters.min_confidence),
        ("compression_level", "<=", filters.max_compression),
    ):
        if value is not None:
            clauses.append(f"{alias}{column} {op} {m}")
            params.append(value)
    if filters.cluster is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM cluster_member m "
            f"WHERE m.cluster_id = {m} AND m.doc_id = {alias}id)"
        )
        params.append(filters.cluster)
    if filters.collapse:  # a duplicate shows as its canonical, while that is live
        clauses.append(
            f"({alias}canonical_id IS NULL OR {alias}canonical_id = {alias}id OR NOT EXISTS "
            f"(SELECT 1 FROM document c WHERE c.id = {alias}canonical_id "
            "AND c.deleted_at IS NULL))"
        )
    return clauses, params


def _add_fields(
    clauses: list[str], params: list[Any], filters: Filters, dialect: Dialect, alias: str
) -> None:
    """Source, type, author, tags and the time range."""
    for column in ("source", "doc_type", "author"):
        values: tuple[str, ...] = getattr(filters, column)
        if values:
            _add(clauses, params, dialect.any_of(f"{alias}{column}", values))
    tags, tagged = dialect.has_all(f"{alias}tags", filters.tags)
    clauses += tags
    params += tagged
    for op, value in ((">=", filters.since), ("<=", filters.until)):
        if value is not None:
            clauses.append(f"{alias}timestamp {op} {dialect.mark}")
            params.append(value)


def _add(clauses: list[str], params: list[Any], part: tuple[str, list[Any]]) -> None:
    clauses.append(part[0])
    params.extend(part[1])
