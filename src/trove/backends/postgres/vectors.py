"""Chunk vectors in pgvector tables, locked to one embedder, searched in the server.

As in SQLite, vectors sit in a table per generation (``chunk_vec_1``, ``chunk_vec_2`` ...)
named by the lock in ``meta``, so a rebuild fills a new table beside the old one and
switches in one transaction. Each table has an HNSW index (cosine); a rebuild builds it
once at the end, which is much faster than growing it row by row, and so does a bulk
load into a small table (bulk.py).

A filtered k-NN first asks the index for the nearest chunks and filters them; when the
filter leaves fewer than ``limit`` documents, it ranks exactly the chunks the filter
allows (pgvector before 0.8 has no iterative index scans, and an HNSW scan returns at
most ``hnsw.ef_search`` rows).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.base import EmbedderLock
from trove.backends.postgres import bulk, delta, locks
from trove.backends.postgres.connection import Connected
from trove.backends.postgres.filters import chunk_of, filter_sql, split_rows
from trove.backends.postgres.shown import SHOWN, passages_of
from trove.backends.ranking import collapse
from trove.backends.vector_lock import LOCK_KEY, next_table, read_lock, same_embedder, written_lock
from trove.errors import EmbedderMismatch, StoreError
from trove.hits import ChunkHit, HitDetails
from trove.search import deadline, passage
from trove.search.filters import Filters
from trove.search.query import ParsedQuery

_TABLE = re.compile(r"chunk_vec_[0-9]+")
# pgvector's limits: HNSW indexes vectors of up to 2,000 dimensions and an index scan
# returns at most ef_search (<= 1,000) rows.
_MAX_INDEXED_DIMENSION = 2000
_MAX_EF_SEARCH = 1000
# ef_search of a k-NN (raised to its limit): recall@10 >= 0.99 against exact at 100k chunks
# of real vectors (docs/benchmarks.md, bench/scale.py --backend postgres).
EF_SEARCH = 200
# The k-NN statement (prepared by psycopg from its fifth use on a connection) runs on its
# generic plan: PostgreSQL kept planning it afresh for each query vector (custom plans),
# 0.2-0.3 ms of server time a search for the same plan (the HNSW scan, then index look-ups
# of its ef_search rows, written into the statement so the plan knows how few they are).
_KNN_SETTINGS = {"plan_cache_mode": "force_generic_plan"}
# A search takes the embedder lock it last read, up to this old (a round trip less); the
# lock's table can only be gone if the lock moved on, which the k-NN then finds out.
_LOCK_TTL_S = 5.0


class VectorStorage(Connected):
    """Mixin of the PostgreSQL backend: everything about stored vectors."""

    # --- the lock ---------------------------------------------------------------------

    # (when, lock): the lock as last read, what a search may take (see vector_lock).
    _lock_read: tuple[float, EmbedderLock] | None = None

    def vector_lock(self) -> EmbedderLock | None:
        """The embedder lock. Inside a search, the one read within the last _LOCK_TTL_S:
        its table is searched, and if a rebuild dropped it meanwhile the k-NN reads the
        lock again (vector_search). Writes and everything else read it each time."""
        seen = self._lock_read
        in_search = deadline.left() is not None
        if seen is not None and in_search and time.monotonic() - seen[0] < _LOCK_TTL_S:
            return seen[1]
        lock = read_lock(self.get_meta(LOCK_KEY))
        self._lock_read = None if lock is None else (time.monotonic(), lock)
        return lock

    def lock_vectors(self, spec: str, model_id: str, dimension: int) -> EmbedderLock:
        """Create the first vector table and record the embedder that fills it.

        Two processes writing a store's first vectors at once get one table: the second
        finds the first's lock and uses it (or is refused, if its embedder differs).
        """
        with self.transaction(), self.conn() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (locks.VECTORS, self.schema)
            )
            existing = self.vector_lock()
            if existing is not None:
                return same_embedder(existing, model_id, dimension)
            table = self._new_table(conn, dimension)
            self._index(conn, table, dimension)
            lock = EmbedderLock(spec, model_id, dimension, table)
            self.set_meta(LOCK_KEY, written_lock(lock))
            self._lock_read = None
            return lock

    def begin_rebuild(self, dimension: int) -> str:
        """A fresh vector table beside the active one (leftovers of a crash are dropped)."""
        with self.transaction(), self.conn() as conn:
            lock = self.vector_lock()
            for table in self._vector_tables(conn):
                if lock is None or table != lock.table:
                    conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier(table)))
            return self._new_table(conn, dimension)

    def finish_rebuild(self, lock: EmbedderLock) -> None:
        """Index ``lock.table``, make it the active vectors and drop the old ones, atomically."""
        with self.transaction(), self.conn() as conn:
            old = self.vector_lock()
            self._index(conn, checked_table(lock.table), lock.dimension)
            self.set_meta(LOCK_KEY, written_lock(lock))
            self._lock_read = None
            if old is not None and old.table != lock.table:
                conn.execute(
                    sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(old.table))
                )

    def _vector_tables(self, conn: psycopg.Connection) -> list[str]:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (self.schema,)
        ).fetchall()
        return sorted(str(r[0]) for r in rows if _TABLE.fullmatch(str(r[0])))

    def _new_table(self, conn: psycopg.Connection, dimension: int) -> str:
        table = next_table(self._vector_tables(conn), self.vector_lock())
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (chunk_id bigint PRIMARY KEY REFERENCES chunk (id) "
                "ON DELETE CASCADE, embedding vector({}) NOT NULL)"
            ).format(sql.Identifier(table), sql.Literal(int(dimension)))
        )
        return table

    @staticmethod
    def _index(conn: psycopg.Connection, table: str, dimension: int) -> None:
        if dimension > _MAX_INDEXED_DIMENSION:
            return  # too wide for HNSW: searches scan exactly
        bulk.create_index(conn, table)

    # --- rows -------------------------------------------------------------------------

    def put_vectors(self, table: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Upsert vectors; a large batch into a small table without the HNSW index, built
        again after the load (bulk.py)."""
        if not len(chunk_ids):
            return
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        aside = self._set_aside_tables()
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            table = checked_table(table)
            indexed = rows.shape[1] <= _MAX_INDEXED_DIMENSION
            if indexed and (
                (table in aside and len(chunk_ids) >= bulk.BULK_ROWS)
                or bulk.worth_setting_aside(conn, table, len(chunk_ids))
            ):
                bulk.set_aside(conn, table)
                aside[table] = rows.shape[1]
                delta.forget(cur, table, chunk_ids)
                bulk.copy_vectors(cur, table, chunk_ids, rows)
                return
            if table in aside:  # the load is over: the index first (then one insert)
                bulk.build_memory(conn)
                self._index(conn, table, aside.pop(table))
            elif indexed and bulk.missing_index(conn, table, self.__dict__):
                # Set aside by a writer that never finished (killed mid-load): built here.
                bulk.build_memory(conn)
                self._index(conn, table, rows.shape[1])
            if indexed and delta.route(conn, table):
                # A large indexed table: into its delta, sealed into an indexed segment when
                # full, folded in the background (delta.py).
                delta.write(conn, cur, table, chunk_ids, rows)
                self._folder(table).kick()
                return
            delta.forget(cur, table, chunk_ids)
            cur.executemany(
                sql.SQL(
                    "INSERT INTO {} (chunk_id, embedding) VALUES (%s, %s) "
                    "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding"
                ).format(sql.Identifier(checked_table(table))),
                [(int(cid), rows[i]) for i, cid in enumerate(chunk_ids)],
            )

    def _set_aside_tables(self) -> dict[str, int]:
        """Vector tables (and their dimension) whose index this backend set aside."""
        aside: dict[str, int] | None = self.__dict__.get("_aside")
        if aside is None:
            aside = self.__dict__.setdefault("_aside", {})
        return aside

    def _folder(self, table: str) -> delta.Folder:
        """The folder of ``table``'s delta in this backend (created at first use)."""
        folders: dict[str, delta.Folder] = self.__dict__.setdefault("_folders", {})
        if table not in folders:
            folders[table] = delta.Folder(self._fold_connection, table)
        return folders[table]

    def _fold_connection(self) -> psycopg.Connection:
        conn = psycopg.connect(self.target.conninfo, autocommit=True)
        self._set_path(conn)
        return conn

    def stop_folding(self) -> None:
        """Stop this backend's folders (at close): what they left stays in the delta."""
        for folder in self.__dict__.get("_folders", {}).values():
            folder.stop()

    def finish_bulk(self) -> None:
        """Build the HNSW indexes this backend set aside for a bulk load (bulk.py)."""
        aside = self._set_aside_tables()
        while aside:
            table, dimension = aside.popitem()
            with self.transaction(), self.conn() as conn:
                found = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
                if found is not None and found[0] is not None:  # not dropped meanwhile
                    bulk.build_memory(conn)
                    self._index(conn, table, dimension)

    def vectors_by_hash(self, table: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of chunks with these text hashes: unchanged text is not re-embedded."""
        if not text_hashes:
            return {}
        rows = self.rows(
            sql.SQL(
                "SELECT DISTINCT ON (c.text_hash) c.text_hash, v.embedding FROM chunk c "
                "JOIN {} v ON v.chunk_id = c.id WHERE c.text_hash = ANY(%s)"
            ).format(sql.Identifier(checked_table(table))),
            (list(text_hashes),),
        )
        return {str(digest): as_array(vector) for digest, vector in rows}

    def chunks_without_vectors(
        self, table: str, *, batch: int = 256
    ) -> Iterator[list[tuple[int, str, str]]]:
        """Batches of (chunk id, head, text) that have no vector in ``table``, of documents
        the semantic index holds (an entry kept out of it is never given one). For an entry
        under entry control, head and text are what its vector is made of when written
        (its title and ``semantic_text``, else its text), not its keyword chunk's."""
        controlled = (
            "(d.indexed = 'semantic' OR d.keyword_text IS NOT NULL OR d.semantic_text IS NOT NULL)"
        )
        query = sql.SQL(
            "SELECT c.id, CASE WHEN " + controlled + " THEN d.title ELSE c.head END, "
            "CASE WHEN " + controlled + " THEN coalesce(d.semantic_text, d.text) ELSE c.text END "
            "FROM chunk c JOIN document d ON d.id = c.doc_id WHERE c.id > %s "
            "AND d.indexed IN ('both', 'semantic') AND NOT EXISTS "
            "(SELECT 1 FROM {} v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT %s"
        ).format(sql.Identifier(checked_table(table)))
        after = 0
        while True:
            rows = [
                (int(cid), str(head), str(text))
                for cid, head, text in self.rows(query, (after, batch))
            ]
            if not rows:
                return
            yield rows
            after = rows[-1][0]

    def chunks_kept_out(self, namespace: str | None = None, session: str | None = None) -> int:
        """Chunks of entries kept out of the semantic index (``index`` keyword), which are
        never given a vector; scoped as :meth:`vector_count`."""
        row = self.one(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE d.indexed NOT IN ('both', 'semantic') "
            "AND (%(ns)s::text IS NULL OR d.namespace = %(ns)s::text) "
            "AND (%(s)s::text IS NULL OR d.scope <> 'session' OR d.session_id = %(s)s::text)",
            {"ns": namespace, "s": session},
        )
        return int(row[0]) if row else 0

    def vector_count(self, namespace: str | None = None, session: str | None = None) -> int:
        """Stored vectors; of one namespace's (and session's) documents, as stats counts."""
        lock = self.vector_lock()
        if lock is None:
            return 0
        table = sql.Identifier(checked_table(lock.table))
        if namespace is None and session is None:
            row = self.one(sql.SQL("SELECT count(*) FROM {}").format(table))
            return int(row[0]) if row else 0
        query = sql.SQL(
            "SELECT count(*) FROM {} v JOIN chunk c ON c.id = v.chunk_id "
            "JOIN document d ON d.id = c.doc_id "
            "WHERE (%(ns)s::text IS NULL OR d.namespace = %(ns)s::text) "
            "AND (%(s)s::text IS NULL OR d.scope <> 'session' OR d.session_id = %(s)s::text)"
        ).format(table)
        ns = namespace
        se = session
        row = self.one(query, {"ns": ns, "s": se})
        return int(row[0]) if row else 0

    # --- k-NN -------------------------------------------------------------------------

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
        knn = _Knn(sql.Identifier(checked_table(lock.table)), vector, sql.SQL(where), params)
        indexed = lock.dimension <= _MAX_INDEXED_DIMENSION
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
        many it found, and how many passed (up to ``cap``). One statement: the index
        scan, then its chunks in order, each joined to its rows only until ``cap``
        passed, collapsed to documents in the server. With ``chars``, each document's
        rows of :meth:`hit_details` too (one a chunk read, as that reads them)."""
        query = sql.SQL(
            "WITH ann AS MATERIALIZED (SELECT chunk_id, embedding <=> %s AS dist FROM {table} "
            "ORDER BY dist LIMIT {ef}), near AS MATERIALIZED (SELECT a.chunk_id, a.dist, "
            "c.doc_id, c.idx, c.start_char, c.end_char, c.heading "
            "FROM (SELECT * FROM ann ORDER BY dist, chunk_id) a "
            "JOIN chunk c ON c.id = a.chunk_id JOIN document d ON d.id = c.doc_id "
            "WHERE {where} ORDER BY a.dist, a.chunk_id LIMIT %s) "
            "SELECT (SELECT count(*) FROM ann), (SELECT count(*) FROM near), b.*{shown} FROM "
            "(SELECT 1) n LEFT JOIN (SELECT * FROM (SELECT DISTINCT ON (doc_id) * FROM near "
            "ORDER BY doc_id, dist, chunk_id) u ORDER BY dist, chunk_id LIMIT %s) b ON true"
            "{details} ORDER BY b.dist, b.chunk_id"
        ).format(
            table=knn.table,
            where=knn.where,
            ef=sql.Literal(int(ef)),
            shown=sql.SQL(_SHOWN if chars is not None else ""),
            details=sql.SQL(_DETAILS if chars is not None else ""),
        )
        params = [knn.vector, *knn.params, cap]
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
    """A k-NN's hits; how many chunks the index gave and how many passed the filter; and
    the rows of what search shows of the hits, when read with them."""

    hits: list[ChunkHit]
    seen: int
    passed: int
    shown: list[tuple[Any, ...]] | None


class _Knn(NamedTuple):
    """A k-NN query: the vector table, the query vector, the filter and its parameters."""

    table: sql.Identifier
    vector: np.ndarray
    where: sql.SQL
    params: list[Any]


def checked_table(table: str) -> str:
    """A vector table name from the lock: only ever ``chunk_vec_N``."""
    if not _TABLE.fullmatch(table):
        raise StoreError(f"{table!r} is not a trove vector table")
    return table


def as_array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.astype(np.float32, copy=False)
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, np.float32)
