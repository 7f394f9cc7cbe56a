"""Chunk vectors in pgvector tables, locked to one embedder (searched by knn.py).

As in SQLite, vectors sit in a table per generation (``chunk_vec_1``, ``chunk_vec_2`` ...)
named by the lock in ``meta``, so a rebuild fills a new table beside the old one and
switches in one transaction. Each table has an HNSW index (cosine, over the vectors' half
precision where pgvector has it: hnsw.py); a rebuild builds it once at the end, which is
much faster than growing it row by row, and so does a bulk load into a small table
(bulk.py).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.base import EmbedderLock
from trove.backends.postgres import bulk, delta, hnsw, locks
from trove.backends.postgres.connection import Connected
from trove.backends.vector_lock import LOCK_KEY, next_table, read_lock, same_embedder, written_lock
from trove.errors import StoreError
from trove.search import deadline

_TABLE = re.compile(r"chunk_vec_[0-9]+")
# A search takes the embedder lock it last read, up to this old (a round trip less); the
# lock's table can only be gone if the lock moved on, which the k-NN then finds out.
_LOCK_TTL_S = 5.0


class VectorStorage(Connected):
    """Mixin of the PostgreSQL backend: everything about stored vectors."""

    # --- the lock ---------------------------------------------------------------------

    # (when, lock): the lock as last read, what a search may take (see vector_lock).
    _lock_read: tuple[float, EmbedderLock] | None = None
    vector_version: str  # pgvector's installed version (backend.py)

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

    def _index(self, conn: psycopg.Connection, table: str, dimension: int) -> None:
        """A new table's index, in the form this pgvector builds (none for vectors too
        wide: searches rank them exactly)."""
        hnsw.create(conn, table, hnsw.built(self.vector_version, dimension))

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
            indexed = hnsw.built(self.vector_version, rows.shape[1]).indexed
            if indexed and (
                (table in aside and len(chunk_ids) >= bulk.BULK_ROWS)
                or bulk.worth_setting_aside(conn, table, len(chunk_ids))
            ):
                if table not in aside:  # built again after the load in the form it had
                    aside[table] = hnsw.form_of(conn, table)[0]
                bulk.set_aside(conn, table)
                delta.forget(cur, table, chunk_ids)
                bulk.copy_vectors(cur, table, chunk_ids, rows)
                return
            if table in aside:  # the load is over: the index first (then one insert)
                bulk.build_memory(conn)
                hnsw.create(conn, table, aside.pop(table))
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

    def _set_aside_tables(self) -> dict[str, hnsw.Form]:
        """Vector tables (and their index's form) whose index this backend set aside."""
        aside: dict[str, hnsw.Form] | None = self.__dict__.get("_aside")
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
            table, form = aside.popitem()
            with self.transaction(), self.conn() as conn:
                found = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
                if found is not None and found[0] is not None:  # not dropped meanwhile
                    bulk.build_memory(conn)
                    hnsw.create(conn, table, form)

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


def checked_table(table: str) -> str:
    """A vector table name from the lock: only ever ``chunk_vec_N``."""
    if not _TABLE.fullmatch(table):
        raise StoreError(f"{table!r} is not a trove vector table")
    return table


def as_array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.astype(np.float32, copy=False)
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, np.float32)
