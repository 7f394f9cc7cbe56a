"""The PostgreSQL backend: a schema per store, psycopg 3 with a connection pool, pgvector.

Open it with ``trove.open("postgresql://user@host/db?schema=NAME")``. Rows, full-text
vectors and embeddings of one document are written in one transaction, so a writer that
dies (or a server that restarts) midway leaves the old version or the new one. Several
processes may write at once: upserts take the document's row lock, so writes of one
document queue up instead of interleaving.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from trove.errors import MissingDependency, StoreError

try:
    import psycopg
    from pgvector.psycopg.vector import register_vector_info
    from psycopg import sql
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependency(exc.name or "psycopg", "postgres", "PostgreSQL support") from None

from trove.backends.base import ChunkRow, DocumentWrite
from trove.backends.postgres import text as text_index
from trove.backends.postgres.clusters import PostgresClusters
from trove.backends.postgres.files import PostgresFiles
from trove.backends.postgres.lifecycle import PostgresLifecycle
from trove.backends.postgres.originals import PostgresOriginals
from trove.backends.postgres.schema import (
    current_version,
    ensure_vector_extension,
    migrate,
)
from trove.backends.postgres.search import PostgresSearch
from trove.backends.postgres.text import esc, esc_opt, filterable, unesc
from trove.backends.postgres.url import PostgresTarget, parse
from trove.backends.postgres.vectors import PostgresVectors, as_array, checked_table
from trove.models import DOCUMENT_FIELDS, Chunk, Document
from trove.timeutil import to_epoch, to_iso

_LOST = "lost the connection to"
# Advisory lock space for "a writer is deciding about this document id".
_DOC_LOCKS = 0x54524F58

DOC_COLUMNS = list(DOCUMENT_FIELDS)
HEADER_COLUMNS = [c for c in DOC_COLUMNS if c != "text"]
_TIME_COLUMNS = (
    "timestamp",
    "created_at",
    "updated_at",
    "deleted_at",
    "expires_at",
    "last_accessed",
)
_ARRAY_COLUMNS = ("participants", "tags", "entities", "source_turn_ids")
_NUMBER_COLUMNS = (
    "importance",
    "confidence",
    "compression_level",
    "access_count",
    *_TIME_COLUMNS,
)
_STRING_COLUMNS = tuple(
    c for c in DOC_COLUMNS if c not in (*_ARRAY_COLUMNS, *_NUMBER_COLUMNS, "metadata")
)


class PostgresBackend(
    PostgresVectors,
    PostgresSearch,
    PostgresLifecycle,
    PostgresClusters,
    PostgresOriginals,
    PostgresFiles,
):
    """Everything trove stores, in one PostgreSQL schema. Thread-safe: each thread's
    transaction has its own pooled connection."""

    def __init__(self, target: str) -> None:
        self.target: PostgresTarget = parse(target)
        self.schema = self.target.schema
        self.where = f"{self.target.where}, schema {self.schema}"
        self._local = threading.local()
        self._stats_cache: tuple[float, int, float, float] | None = None
        self._stems: dict[str, tuple[str, ...]] = {}
        # "ts_rank_cd" is kept for comparison only (bench/backends.py): BM25 is far better.
        self.ranking = "bm25"
        with self._errors("cannot connect to"), self._direct() as conn:
            ext_schema, self.vector_version = ensure_vector_extension(conn)
            self._search_path = [self.schema] + ([ext_schema] if ext_schema != self.schema else [])
            self._set_path(conn)
            migrate(conn, self.schema)
            self.vector_info = psycopg.types.TypeInfo.fetch(conn, "vector")
        self.pool = ConnectionPool(
            self.target.conninfo,
            min_size=1,
            max_size=self.target.pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            # A server restart leaves dead connections in the pool: test on checkout.
            check=ConnectionPool.check_connection,
            name=f"trove:{self.schema}",
            num_workers=1,
            open=False,
        )
        try:
            self.pool.open(wait=True, timeout=self._timeout())
        except PoolTimeout:
            self.pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {self.where}") from None

    # --- connections ------------------------------------------------------------------

    def _timeout(self) -> float:
        match = re.search(r"connect_timeout=(\d+)", self.target.conninfo)
        return float(match.group(1)) if match else 10.0

    @contextlib.contextmanager
    def _direct(self) -> Iterator[psycopg.Connection]:
        conn = psycopg.connect(self.target.conninfo, autocommit=True)
        try:
            yield conn
        finally:
            conn.close()

    def _set_path(self, conn: psycopg.Connection) -> None:
        conn.execute(
            sql.SQL("SET search_path TO {}").format(
                sql.SQL(", ").join(sql.Identifier(s) for s in self._search_path)
            )
        )

    def _configure(self, conn: psycopg.Connection) -> None:
        self._set_path(conn)
        register_vector_info(conn, self.vector_info)

    @contextlib.contextmanager
    def _errors(self, doing: str = _LOST) -> Iterator[None]:
        """Driver errors that are the server's or the network's become a StoreError that
        names the server (never the password); bugs stay what they are."""
        try:
            yield
        except psycopg.errors.TransactionRollback as exc:
            raise StoreError(
                f"a concurrent write to PostgreSQL at {self.where} conflicted with this one; "
                f"nothing of it was written, retry ({self._reason(exc)})"
            ) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            message = f"{doing} PostgreSQL at {self.where}: {self._reason(exc)}"
            if doing == _LOST:
                message += "; nothing of an unfinished write was kept"
            raise StoreError(message) from None
        except PoolTimeout:
            raise StoreError(
                f"no connection to PostgreSQL at {self.where} became free in time"
            ) from None

    def _reason(self, exc: BaseException) -> str:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return self.target.scrub(first)

    @contextlib.contextmanager
    def conn(self) -> Iterator[psycopg.Connection]:
        """This thread's transaction connection, or a pooled one for one statement."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._errors(), self.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        self.pool.close()

    def warm(self) -> None:
        """Nothing to load: PostgreSQL's indexes live in the server."""

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; nests (inner blocks join the outer transaction)."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._errors(), self.pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        with self.conn() as conn:
            return list(conn.execute(query, params).fetchall())

    def one(self, query: Any, params: Any = ()) -> tuple[Any, ...] | None:
        with self.conn() as conn:
            row = conn.execute(query, params).fetchone()
        return None if row is None else tuple(row)

    def _written(self) -> None:
        """Chunks changed: the corpus figures BM25 uses are recomputed on the next search."""
        self._stats_cache = None

    # --- meta -------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.one("SELECT value FROM meta WHERE key = %s", (esc(key),))
        return None if row is None else unesc(str(row[0]))

    def set_meta(self, key: str, value: str | None) -> None:
        with self.transaction(), self.conn() as conn:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key = %s", (esc(key),))
            else:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (esc(key), esc(value)),
                )

    # --- documents --------------------------------------------------------------------

    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None:
        columns = DOC_COLUMNS if with_text else HEADER_COLUMNS
        if getattr(self._local, "conn", None) is not None:
            # Read inside a write: the writer decides from it, so writers of one id (even
            # one not stored yet, which no row lock covers) take turns until commit.
            self.one("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_DOC_LOCKS, esc(doc_id)))
        row = self.one(f"SELECT {', '.join(columns)} FROM document WHERE id = %s", (esc(doc_id),))
        return None if row is None else document(columns, row)

    def documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        query = f"SELECT {', '.join(DOC_COLUMNS)} FROM document WHERE {where} {tail}"
        return [document(DOC_COLUMNS, row) for row in self.rows(query, params)]

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        """Headers (no text) of several documents, by id."""
        if getattr(self._local, "conn", None) is not None:
            # Inside a write, as in get_document; in id order, so that two writers of
            # overlapping batches cannot wait on each other.
            for doc_id in sorted(set(doc_ids)):
                self.one(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_DOC_LOCKS, esc(doc_id))
                )
        rows = self.rows(
            f"SELECT {', '.join(HEADER_COLUMNS)} FROM document WHERE id = ANY(%s)",
            ([esc(i) for i in doc_ids],),
        )
        return {doc.id: doc for doc in (document(HEADER_COLUMNS, row) for row in rows)}

    def iter_documents(self, *, after: str | None, limit: int) -> list[Document]:
        """Every document (all namespaces, deleted and expired too), by id, a page at a time."""
        return self.documents(
            "(%s::text IS NULL OR id > %s)",
            (esc_opt(after), esc_opt(after)),
            f"ORDER BY id LIMIT {int(limit)}",
        )

    def put_document(self, doc: Document, *, text: bool = True) -> None:
        """Insert or replace the row; ``text=False`` updates an existing row, text untouched."""
        values = row_values(doc)
        with self.transaction(), self.conn() as conn:
            if not text:
                columns = [c for c in HEADER_COLUMNS if c != "id"] + ["meta"]
                sets = ", ".join(f"{c} = %s" for c in columns)
                conn.execute(
                    f"UPDATE document SET {sets} WHERE id = %s",
                    [values[c] for c in columns] + [values["id"]],
                )
                return
            columns = [*DOC_COLUMNS, "meta", "text_bytes"]
            updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
            conn.execute(
                f"INSERT INTO document ({', '.join(columns)}) "
                f"VALUES ({', '.join(['%s'] * len(columns))}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                [values[c] for c in columns],
            )

    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]:
        """Swap a document's chunks and their text-search vectors; returns (old ids, new ids)."""
        with self.transaction(), self.conn() as conn:
            cur = conn.execute("DELETE FROM chunk WHERE doc_id = %s RETURNING id", (esc(doc_id),))
            dropped = [int(r[0]) for r in cur.fetchall()]
            ids: list[int] = []
            if chunks:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO chunk (doc_id, idx, start_char, end_char, heading, head, "
                        "text, text_hash, words, words_len, grams, grams_len) VALUES "
                        "(%s, %s, %s, %s, %s, %s, %s, %s, to_tsvector('trove_words', %s), %s, "
                        "%s::tsvector, %s) RETURNING id",
                        [_chunk_params(doc_id, row) for row in chunks],
                        returning=True,
                    )
                    while True:
                        ids.append(int(cur.fetchone()[0]))  # type: ignore[index]
                        if not cur.nextset():
                            break
        self._written()
        return dropped, ids

    def put_many(self, writes: Sequence[DocumentWrite]) -> tuple[list[int], list[int]]:
        """:meth:`put_document` and :meth:`replace_chunks` for each write of a batch."""
        dropped: list[int] = []
        ids: list[int] = []
        with self.transaction():
            for write in writes:
                self.put_document(write.doc, text=write.reindex)
                if write.reindex:
                    old, new = self.replace_chunks(write.doc.id, write.chunks)
                    dropped.extend(old)
                    ids.extend(new)
        return dropped, ids

    def export_chunks(
        self, doc_ids: Sequence[str], table: str | None
    ) -> dict[str, list[tuple[ChunkRow, np.ndarray | None]]]:
        """The stored chunks of documents in order, each with its vector from ``table``
        (None where it has none): what copying a store needs."""
        vector = (
            sql.SQL("(SELECT v.embedding FROM {} v WHERE v.chunk_id = c.id)").format(
                sql.Identifier(checked_table(table))
            )
            if table
            else sql.SQL("NULL::vector")
        )
        query = sql.SQL(
            "SELECT c.doc_id, c.idx, c.start_char, c.end_char, c.heading, c.head, c.text, "
            "c.text_hash, {} FROM chunk c WHERE c.doc_id = ANY(%s) ORDER BY c.doc_id, c.idx"
        ).format(vector)
        found: dict[str, list[tuple[ChunkRow, np.ndarray | None]]] = {}
        for doc_id, idx, start, end, heading, head, text, digest, embedding in self.rows(
            query, ([esc(i) for i in doc_ids],)
        ):
            chunk = Chunk(index=idx, start=start, end=end, heading=unesc(heading))
            row = ChunkRow(chunk=chunk, head=unesc(head), text=unesc(text), text_hash=digest)
            found.setdefault(unesc(doc_id), []).append(
                (row, None if embedding is None else as_array(embedding))
            )
        return found

    def set_deleted(self, doc_id: str, when: float | None) -> bool:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "UPDATE document SET deleted_at = %s, updated_at = coalesce(%s, updated_at) "
                "WHERE id = %s",
                (when, when, esc(doc_id)),
            )
            return cur.rowcount > 0

    def purge(self, now: float) -> list[str]:
        """Remove tombstoned and expired documents for good; returns their ids."""
        with self.transaction(), self.conn() as conn:
            rows = conn.execute(
                "DELETE FROM document WHERE deleted_at IS NOT NULL "
                "OR (expires_at IS NOT NULL AND expires_at <= %s) RETURNING id",
                (now,),
            ).fetchall()
        self._written()
        return [unesc(str(r[0])) for r in rows]

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.rows(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = %s AND source = %s AND source_id IS NOT NULL",
            (esc(namespace), esc(source)),
        )
        return {unesc(str(r[0])): (unesc(str(r[1])), str(r[2]), bool(r[3])) for r in rows}

    # --- statistics -------------------------------------------------------------------

    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Counts and sizes, of the whole schema or of one namespace (and session, if
        given: other sessions' items are not counted)."""
        mine = (
            "(%(ns)s::text IS NULL OR namespace = %(ns)s) AND (%(session)s::text IS NULL "
            "OR scope <> 'session' OR session_id = %(session)s)"
        )
        live = f"{mine} AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > %(now)s)"
        args = {"ns": esc_opt(namespace), "now": now, "session": esc_opt(session)}

        def count(where: str) -> int:
            row = self.one(f"SELECT count(*) FROM document WHERE {where}", args)
            return int(row[0]) if row else 0

        def grouped(column: str) -> dict[str, int]:
            query = (
                f"SELECT {column}, count(*) FROM document WHERE {live} GROUP BY 1 ORDER BY 2 DESC"
            )
            return {unesc(str(k)): int(n) for k, n in self.rows(query, args)}

        chunks = self.one(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (%(ns)s::text IS NULL OR d.namespace = %(ns)s) AND (%(session)s::text IS NULL "
            "OR d.scope <> 'session' OR d.session_id = %(session)s)",
            args,
        )
        text_bytes = self.one(
            f"SELECT coalesce(sum(text_bytes), 0) FROM document WHERE {mine}", args
        )
        size = 0
        if namespace is None:
            row = self.one(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
                (self.schema,),
            )
            size = int(row[0]) if row else 0
        with self.conn() as conn:
            version = current_version(conn, self.schema)
        return {
            "documents": count(live),
            "chunks": int(chunks[0]) if chunks else 0,
            "deleted": count(f"{mine} AND deleted_at IS NOT NULL"),
            "expired": count(
                f"{mine} AND deleted_at IS NULL AND expires_at IS NOT NULL "
                "AND expires_at <= %(now)s"
            ),
            "by_source": grouped("source"),
            "by_doc_type": grouped("doc_type"),
            "by_namespace": grouped("namespace"),
            "text_bytes": int(text_bytes[0]) if text_bytes else 0,
            "file_bytes": size,
            "schema_version": version,
        }


def _chunk_params(doc_id: str, row: ChunkRow) -> tuple[Any, ...]:
    words = text_index.words(row.head) + text_index.words(row.text)
    grams = text_index.grams(row.head) + text_index.grams(row.text)
    return (
        esc(doc_id),
        row.chunk.index,
        row.chunk.start,
        row.chunk.end,
        esc(row.chunk.heading),
        esc(row.head),
        esc(row.text),
        row.text_hash,
        " ".join(words),
        len(words),
        text_index.tsvector(grams),
        len(grams),
    )


def row_values(doc: Document) -> dict[str, Any]:
    """A document as column values: strings escaped, times as epoch seconds."""
    values: dict[str, Any] = {c: getattr(doc, c) for c in DOC_COLUMNS}
    for column in _STRING_COLUMNS:
        values[column] = esc_opt(values[column])
    for column in _ARRAY_COLUMNS:
        values[column] = [esc(v) for v in values[column]]
    values["metadata"] = json.dumps(doc.metadata, ensure_ascii=False, sort_keys=True)
    values["meta"] = Jsonb(filterable(doc.metadata))
    values["text_bytes"] = len(doc.text.encode("utf-8"))
    for column in _TIME_COLUMNS:
        values[column] = to_epoch(values[column], field=column)
    return values


def document(columns: Sequence[str], row: Sequence[Any]) -> Document:
    values = dict(zip(columns, row, strict=True))
    for column in _STRING_COLUMNS:
        if column in values and values[column] is not None:
            values[column] = unesc(values[column])
    for column in _ARRAY_COLUMNS:
        values[column] = tuple(unesc(v) for v in values[column])
    values["metadata"] = json.loads(values["metadata"])
    for column in _TIME_COLUMNS:
        values[column] = to_iso(values[column])
    values.setdefault("text", "")
    return Document(**values)
