"""The k-NN of the PostgreSQL backend: the nearest documents by their best chunk, with
what search shows of them, in one statement.

The table's HNSW index (hnsw.py) gives the nearest chunks; a filter runs on them in the
same statement. When the filter leaves fewer than ``limit`` documents among them, the scan
widens, and then exactly the chunks the filter allows are ranked (the code keeps to what
pgvector before 0.8 has: no iterative index scans, and an HNSW scan returns at most
``hnsw.ef_search`` rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.base import EmbedderLock
from trove.backends.postgres import hnsw
from trove.backends.postgres.filters import chunk_of, filter_sql, split_rows
from trove.backends.postgres.shown import SHOWN, passages_of
from trove.backends.postgres.vectors import VectorStorage, checked_table
from trove.backends.ranking import collapse
from trove.errors import EmbedderMismatch
from trove.hits import ChunkHit, HitDetails
from trove.search import passage
from trove.search.filters import Filters
from trove.search.query import ParsedQuery

# pgvector's limit: an index scan returns at most ef_search (<= 1,000) rows.
_MAX_EF_SEARCH = 1000
# ef_search of a k-NN (raised to its limit): recall@10 >= 0.99 against exact at 100k chunks
# of real vectors (docs/benchmarks.md, bench/scale.py --backend postgres).
EF_SEARCH = 200
# The k-NN statement (prepared by psycopg from its fifth use on a connection) runs on its
# generic plan: PostgreSQL kept planning it afresh for each query vector (custom plans),
# 0.2-0.3 ms of server time a search for the same plan (the HNSW scan, then index look-ups
# of its ef_search rows, written into the statement so the plan knows how few they are).
_KNN_SETTINGS = {"plan_cache_mode": "force_generic_plan"}


class VectorSearch(VectorStorage):
    """Mixin of the PostgreSQL backend: the k-NN over the stored vectors."""

    def _form(self, table: str) -> hnsw.Form:
        """``table``'s index form, kept once its index exists or if it can have none (a
        rebuild makes a new table; a bulk load sets an index aside and builds it again in
        the same form)."""
        forms: dict[str, hnsw.Form] = self.__dict__.setdefault("_forms", {})
        if table not in forms:
            form, exists = self._read(lambda conn: hnsw.form_of(conn, table))
            if not exists and form.indexed:
                return form
            forms[table] = form
        return forms[table]

    def vector_search(
        self, lock: EmbedderLock, query: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by best-chunk cosine similarity, filters applied inside the k-NN."""
        return self._searched(lock, query, filters, limit, now, None).hits

    def vector_search_shown(
        self,
        lock: EmbedderLock,
        query: np.ndarray,
        filters: Filters,
        limit: int,
        now: float,
        shown: tuple[ParsedQuery, int],
    ) -> tuple[list[ChunkHit], HitDetails]:
        """:meth:`vector_search`, and :meth:`hit_details` of its hits (``shown``: the
        query, and the characters of each text's start) read by the k-NN's own statement:
        a semantic search's round trip less. A search that had to rank exactly reads them
        apart."""
        parsed, chars = shown
        found = self._searched(lock, query, filters, limit, now, chars)
        read = [(h.doc_id, h.chunk_id) for h in found.hits]
        if found.shown is None:
            return found.hits, self.hit_details(parsed, read, chars)
        return found.hits, self.details_of(parsed, found.shown, read)

    def _searched(
        self,
        lock: EmbedderLock,
        query: np.ndarray,
        filters: Filters,
        limit: int,
        now: float,
        chars: int | None,
    ) -> _Found:
        if limit <= 0:
            return _Found([], 0, 0, None)
        if self._set_aside_tables():  # this process's bulk load is over
            self.finish_bulk()
        try:
            return self._knn(lock, query, filters, limit, now, chars)
        except psycopg.errors.UndefinedTable:
            # The lock this search took was stale: another process rebuilt the vectors.
            self._lock_read = None
            fresh = self.vector_lock()
            if fresh is None or (fresh.model_id, fresh.dimension) != (
                lock.model_id,
                lock.dimension,
            ):
                raise EmbedderMismatch(
                    "this store's vectors were rebuilt with another embedder while it was "
                    "open; open it again"
                ) from None
            return self._knn(fresh, query, filters, limit, now, chars)

    def _knn(
        self,
        lock: EmbedderLock,
        query: np.ndarray,
        filters: Filters,
        limit: int,
        now: float,
        chars: int | None,
    ) -> _Found:
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        where, params = filter_sql(filters, now)
        table = checked_table(lock.table)
        form = self._form(table)
        knn = _Knn(sql.Identifier(table), vector, sql.SQL(where), params, form)
        indexed = form.indexed
        # The scan's ef_search: EF_SEARCH at least, for recall@10 >= 0.99 against exact
        # (docs/benchmarks.md), widened only when too few of its chunks pass the filter.
        # Of its chunks, the first ``cap`` that pass are joined to their rows.
        ef, cap = max(limit, EF_SEARCH), 2 * limit
        while indexed and ef <= _MAX_EF_SEARCH:
            found = self._nearest(knn, ef, min(cap, ef), limit, chars)
            if len(found.hits) >= limit:
                return found
            if found.passed >= min(cap, ef) and cap < ef:  # many chunks a document: wider
                cap = ef
            elif found.seen < ef:  # the index has no more chunks
                return found
            else:
                ef *= 4
        # Too few of the nearest chunks pass the filter: rank exactly those that do.
        window = max(limit * 8, 100)
        while True:
            rows = self._exact(knn, window)
            hits = collapse(*split_rows(rows), limit)
            if len(hits) >= limit or len(rows) < window:
                return _Found(hits, len(rows), len(rows), None)
            window *= 8

    def vector_search_many(
        self,
        lock: EmbedderLock,
        queries: np.ndarray,
        filters: Filters,
        limits: Sequence[int],
        now: float,
    ) -> list[list[ChunkHit]]:
        """:meth:`vector_search` of each of ``queries``: one statement each (an HNSW scan
        takes one query vector; the phrasings of one query are few)."""
        return [
            self.vector_search(lock, query, filters, limit, now)
            for query, limit in zip(queries, limits, strict=True)
        ]

    def _nearest(self, knn: _Knn, ef: int, cap: int, limit: int, chars: int | None) -> _Found:
        """The best chunk of each of the ``limit`` nearest documents among the first
        ``cap`` chunks that pass the filter of the ``ef`` nearest the index finds; how
        many chunks the table holds (up to ``ef``: fewer, and the index has no more to
        give), and how many passed (up to ``cap``). One statement: the index scan walked
        in its order, each chunk joined to its rows and filtered, stopping once ``cap``
        passed (a chunk the walk never reaches is never read from the heap); the chunks
        that passed ranked by their exact distance and collapsed to documents in the
        server. With ``chars``, each document's rows of :meth:`hit_details` too (one a
        chunk read, as that reads them). The index is scanned in its form (hnsw.py)."""
        walk = "hd" if knn.form.cast else "dist"  # the order the index gives
        query = sql.SQL(
            "WITH near AS MATERIALIZED (SELECT a.chunk_id, a.dist, c.doc_id, c.idx, "
            "c.start_char, c.end_char, c.heading FROM (SELECT chunk_id, embedding <=> %s AS "
            "dist{indexed} FROM {table} ORDER BY {walk} LIMIT {ef}) a "
            "JOIN chunk c ON c.id = a.chunk_id JOIN document d ON d.id = c.doc_id "
            "WHERE {where} ORDER BY a.{walk}, a.chunk_id LIMIT %s) "
            "SELECT (SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT {ef}) h), "
            "(SELECT count(*) FROM near), b.*{shown} FROM "
            "(SELECT 1) n LEFT JOIN (SELECT * FROM (SELECT DISTINCT ON (doc_id) * FROM near "
            "ORDER BY doc_id, dist, chunk_id) u ORDER BY dist, chunk_id LIMIT %s) b ON true"
            "{details} ORDER BY b.dist, b.chunk_id"
        ).format(
            table=knn.table,
            indexed=sql.SQL(f", {knn.form.distance()} AS hd" if knn.form.cast else ""),
            walk=sql.SQL(walk),
            where=knn.where,
            ef=sql.Literal(int(ef)),
            shown=sql.SQL(_SHOWN if chars is not None else ""),
            details=sql.SQL(_DETAILS if chars is not None else ""),
        )
        ordered_by = [knn.vector] if knn.form.cast else []  # the indexed distance's
        params = [knn.vector, *ordered_by, *knn.params, cap]
        params += [limit] if chars is None else [chars, limit, passage.MAX_CHUNKS]
        # The index returns at most ef_search rows; the settings end with the transaction.
        rows = self.read_with(_KNN_SETTINGS | {"hnsw.ef_search": str(ef)}, query, params)
        hits: list[ChunkHit] = []
        for _, _, cid, dist, doc, idx, start, end, heading, *_ in rows:
            # A document's rows (one a chunk read with it) come one after another.
            if cid is not None and (not hits or hits[-1].chunk_id != cid):
                chunk = chunk_of(idx, start, end, heading)
                hits.append(ChunkHit(str(doc), int(cid), 1.0 - float(dist), chunk))
        shown = None if chars is None else [r[9:] for r in rows if r[2] is not None]
        return _Found(hits, int(rows[0][0]), int(rows[0][1]), shown)

    def _exact(self, knn: _Knn, window: int) -> list[tuple[Any, ...]]:
        # "+ 0" keeps the planner off the HNSW index, which would filter after its top k.
        query = sql.SQL(
            "SELECT v.chunk_id, 1 - (v.embedding <=> %s), c.doc_id, c.idx, c.start_char, "
            "c.end_char, c.heading, true FROM {table} v JOIN chunk c ON c.id = v.chunk_id "
            "JOIN document d ON d.id = c.doc_id WHERE {where} "
            "ORDER BY (v.embedding <=> %s) + 0, v.chunk_id LIMIT %s"
        ).format(table=knn.table, where=knn.where)
        return self.read_with({}, query, [knn.vector, *knn.params, knn.vector, window])


# What hit_details reads of each document (snippets.py), joined to the k-NN's last rows.
_SHOWN = f", {SHOWN}"
_DETAILS = f" LEFT JOIN document d ON d.id = b.doc_id {passages_of('b')}"


class _Found(NamedTuple):
    """A k-NN's hits; how many chunks the table holds (up to the scan's ef_search: fewer,
    and the index has no more to give) and how many passed the filter; and the rows of
    what search shows of the hits, when read with them."""

    hits: list[ChunkHit]
    seen: int
    passed: int
    shown: list[tuple[Any, ...]] | None


class _Knn(NamedTuple):
    """A k-NN query: the vector table, the query vector, the filter and its parameters,
    the form of the table's index."""

    table: sql.Identifier
    vector: np.ndarray
    where: sql.SQL
    params: list[Any]
    form: hnsw.Form
