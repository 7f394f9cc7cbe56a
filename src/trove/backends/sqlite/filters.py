"""Filters as SQL in the SQLite backend: the clause over a document ``d`` for search,
the clauses of a listing, and the chunks or documents a filter lets through."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trove.backends.filter_sql import Dialect, filter_clause
from trove.backends.ranking import SPARE, ChunkFields, collapse
from trove.backends.sqlite.connection import Connected, SerializedConnection

if TYPE_CHECKING:  # only in signatures
    from trove.hits import ChunkHit
    from trove.search.filters import Filters


class FilterQueries(Connected):
    """Mixin of the SQLite backend: which documents pass a filter."""

    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]:
        """The documents among ``doc_ids`` that pass ``filters``."""
        where, params = filter_sql(filters, now, by_id=True)
        rows = self.conn.execute(
            # The id's own index gives the seq (rowid), the covering index the rest.
            "SELECT k.id FROM json_each(?) AS r CROSS JOIN document k ON k.id = r.value "
            "CROSS JOIN document d INDEXED BY document_visible ON d.seq = k.seq "
            f"WHERE {where}",
            (json.dumps(list(doc_ids)), *params),
        )
        return {str(r[0]) for r in rows}


def visible_best(
    conn: SerializedConnection,
    ranked: Sequence[tuple[int, float]],
    where: ChunkCheck,
    limit: int,
    allowed: dict[int, tuple[str, ChunkFields]],
    checked: set[int],
) -> list[ChunkHit]:
    """The best chunk of each of the first ``limit`` documents with a chunk in ``ranked``
    that passes ``where``'s clause (filter_sql's, by id): what :func:`collapse` gives
    over the whole list, but the filter is asked about the chunks in rank order, a batch
    at a time, only until ``limit`` documents are found (a search for 10 documents asks
    about 15 chunks, not 50). ``allowed`` and ``checked`` carry what was asked across a
    widened window."""
    step = first_asked(limit)
    at = 0
    while True:
        ask: list[int] = []
        while at < len(ranked) and len(ask) < step:
            if ranked[at][0] not in checked:
                ask.append(ranked[at][0])
            at += 1
        if ask:
            allowed.update(allowed_chunks(conn, ask, *where.clause(conn)))
            checked.update(ask)
        hits = collapse(ranked[:at], allowed, limit)
        if len(hits) >= limit or at >= len(ranked):
            return hits
        step *= 2


def first_asked(limit: int) -> int:
    """How many ranked chunks :func:`visible_best` asks the filter about first. A
    document's chunks rarely crowd the top, so a few more than ``limit`` usually give
    ``limit`` documents (10 -> 15). Not half again for a deep window: at 1M chunks each
    chunk asked about costs ~20 us (its pages are off SQLite's cache), and a second
    statement, when documents do repeat, costs less than the 84 spare look-ups of asking
    300 chunks for 200 documents."""
    return limit + min(limit // 2, SPARE)


def allowed_chunks(
    conn: SerializedConnection, chunk_ids: Sequence[int], where: str, params: tuple[Any, ...]
) -> dict[int, tuple[str, ChunkFields]]:
    """The chunks among ``chunk_ids`` whose document passes the clause ``where``: each
    one's document and the fields of its Chunk (search/ranking.collapse builds it)."""
    chunks = (
        "SELECT c.id, c.doc_id, c.idx, c.start_char, c.end_char, c.heading "
        # CROSS JOIN fixes the join order: the few ranked ids drive the lookups.
        "FROM json_each(?) AS r CROSS JOIN chunk c ON c.id = r.value"
    )
    if where:
        chunks += (
            f" CROSS JOIN document d INDEXED BY document_visible ON d.seq = c.doc WHERE {where}"
        )
    rows = conn.execute(chunks, (json.dumps(list(chunk_ids)), *params))
    return {row[0]: (row[1], row[2:]) for row in rows}


class ChunkCheck:
    """How one search checks its ranked chunks against ``filters``: the clause by id
    (:func:`filter_sql`), or ``("", ())`` while no document in the store can fail it
    (``filters`` ask only for a namespace, maybe a session, and every document is live and
    in that namespace and in no other session). Then :func:`allowed_chunks` reads no
    document row: 2.3 instead of 4.8-7.1 us a chunk at 1M chunks, and a hybrid search
    checks about 300 chunks a leg. The tally of documents (stats.py, kept by every write)
    says which namespaces, sessions and tombstones there are; expiry needs no write, so the
    soonest expiry time is read from its index.

    The clause is built once; whether it is needed is asked again at each check, after
    the chunks were ranked. An index catches up with other connections' commits as it
    ranks, so a chunk ranked after an earlier answer may belong to a document of another
    namespace: the answer must be as new as the ranking."""

    def __init__(self, filters: Filters, now: float) -> None:
        self.filters = filters
        self.now = now
        self.where = filter_sql(filters, now, by_id=True)
        # Only a namespace (and maybe a session) asked: a store may hide nothing from it.
        self.plain = replace(filters, namespace="default", session=None) == type(filters)()

    def clause(self, conn: SerializedConnection) -> tuple[str, tuple[Any, ...]]:
        if not self.plain:
            return self.where
        f = self.filters
        hidden, expiry = conn.execute(_HIDDEN, (f.namespace, f.session, f.session))[0]
        if hidden or (expiry is not None and expiry <= self.now):
            return self.where
        return "", ()


def chunk_filter(
    conn: SerializedConnection, filters: Filters, now: float
) -> tuple[str, tuple[Any, ...]]:
    """The clause a search's ranked chunks are checked with now (:class:`ChunkCheck`)."""
    return ChunkCheck(filters, now).clause(conn)


# Whether a document of another namespace, a tombstone or another session's document is
# tallied (the parameters: namespace, session, session), and the soonest expiry time of a
# live document. ``+?``: see filter_sql.
_HIDDEN = (
    "SELECT EXISTS (SELECT 1 FROM doc_tally WHERE docs > 0 AND (namespace <> +? OR "
    "deleted <> 0 OR (+? IS NOT NULL AND session <> '' AND session <> '=' || +?))), "
    "(SELECT min(expires_at) FROM document WHERE expires_at IS NOT NULL AND deleted_at IS NULL)"
)


def candidate_chunks(conn: SerializedConnection, filters: Filters, now: float) -> list[int]:
    """Every chunk id whose document passes ``filters`` (for a filtered k-NN)."""
    where, params = filter_sql(filters, now)
    sql = f"SELECT c.id FROM chunk c JOIN document d ON d.seq = c.doc WHERE {where}"
    return [int(r[0]) for r in conn.execute(sql, params)]


def filter_sql(
    filters: Filters, now: float, *, by_id: bool = False
) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause (over ``d``, the document) for ``filters``. ``by_id``: for a
    statement that finds its documents by id (the filter only checks them), where the
    clause's parameters are written ``+?``: SQLite (built with STAT4) prepares a statement
    again each time a bare ``?`` compared with an indexed column (namespace, session,
    source) is bound, and that was most of the time of checking a search's 15 chunks
    (about 0.1 ms of 0.15). ``+?`` is the same value, and no index could use it."""
    where, params = filter_clause(filters, now, BY_ID if by_id else DIALECT)
    return where, tuple(params)


class _SQLite(Dialect):
    """List columns are JSON arrays; metadata is JSON text."""

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        marks = ", ".join([self.mark] * len(values))
        return f"{column} IN ({marks})", list(values)

    def has_all(self, column: str, values: Sequence[str]) -> tuple[list[str], list[Any]]:
        clause = f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = {self.mark})"
        return [clause] * len(values), list(values)

    def metadata_is(self, key: str, value: Any) -> tuple[str, list[Any]]:
        path = '$."' + key.replace('"', '\\"') + '"'
        if value is None:
            return f"json_type(d.metadata, {self.mark}) = 'null'", [path]
        return f"json_extract(d.metadata, {self.mark}) = {self.mark}", [
            path,
            int(value) if isinstance(value, bool) else value,
        ]


class _ById(_SQLite):
    """The clause of a statement that finds its documents by id (see filter_sql)."""

    mark = text_mark = "+?"


DIALECT = _SQLite()
BY_ID = _ById()
