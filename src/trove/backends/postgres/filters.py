"""Filters as SQL in the PostgreSQL backend: the clause over a document ``d`` for
search, the clauses of a listing, and the documents a filter lets through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from trove.backends.filter_sql import Dialect, filter_clause
from trove.backends.postgres.connection import Connected
from trove.backends.postgres.text import filterable
from trove.models import Chunk
from trove.search.filters import Filters


class FilterQueries(Connected):
    """Mixin of the PostgreSQL backend: which documents pass a filter."""

    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]:
        """The documents among ``doc_ids`` that pass ``filters``."""
        where, params = filter_sql(filters, now)
        rows = self.rows(
            f"SELECT d.id FROM document d WHERE d.id = ANY(%s) AND {where}",
            [list(doc_ids), *params],
        )
        return {str(r[0]) for r in rows}


def filter_sql(filters: Filters, now: float) -> tuple[str, list[Any]]:
    """The WHERE clause (over ``d``, the document) for ``filters``; same rules as SQLite."""
    return filter_clause(filters, now, DIALECT)


class _Postgres(Dialect):
    """List columns are ``text[]``; metadata is filtered in a ``jsonb`` copy (``meta``)."""

    mark = "%s"
    text_mark = "%s::text"

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(%s)", [list(values)]

    def has_all(self, column: str, values: Sequence[str]) -> tuple[list[str], list[Any]]:
        return ([f"{column} @> %s::text[]"], [list(values)]) if values else ([], [])

    def metadata_is(self, key: str, value: Any) -> tuple[str, list[Any]]:
        if value is None:
            return "jsonb_typeof(d.meta -> %s) = 'null'", [key]
        # SQLite's json_extract reads true as 1 and false as 0: match either spelling.
        alike: list[Any] = [value]
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            alike = [bool(value), int(value)]
        return "d.meta @> ANY(%s::jsonb[])", [[Jsonb(filterable({key: v})) for v in alike]]


DIALECT = _Postgres()


def split_rows(
    rows: Sequence[tuple[Any, ...]],
) -> tuple[list[tuple[int, float]], dict[int, tuple[str, Chunk]]]:
    """(chunk id, score) in rank order, and the chunks that passed the filter."""
    ranked = [(int(r[0]), float(r[1])) for r in rows]
    allowed = {int(r[0]): (str(r[2]), chunk_of(*r[3:7])) for r in rows if r[7]}
    return ranked, allowed


def chunk_of(idx: int, start: int, end: int, heading: str) -> Chunk:
    return Chunk(index=int(idx), start=int(start), end=int(end), heading=str(heading))
