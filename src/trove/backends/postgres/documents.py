"""Document and chunk rows of the PostgreSQL backend: written, read, mapped to documents.

Rows, full-text vectors and embeddings of one document are written in one transaction,
so a writer that dies (or a server that restarts) midway leaves the old version or the
new one. Several processes may write at once: upserts take the document's row lock, so
writes of one document queue up instead of interleaving.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from trove.backends.postgres import locks, postings
from trove.backends.postgres import text as text_index
from trove.backends.postgres.connection import Connected
from trove.backends.postgres.text import filterable
from trove.backends.postgres.vectors import as_array, checked_table
from trove.backends.rows import (
    CHUNK_COLUMNS,
    DOC_COLUMNS,
    HEADER_COLUMNS,
    chunk_values,
    document_values,
    to_document,
)
from trove.backends.writes import ChunkRow, DocumentWrite
from trove.models import Chunk, Document

# A writer deciding about a document id locks it (locks.DOCUMENT, the id); a writer of a
# few ids also holds the lock over all of them (locks.ALL_DOCUMENTS, the store's schema)
# shared, a writer of more than LOCK_EACH_MAX holds only that one, exclusive (the writers
# of a store take turns from their postings on anyway: postings.write). Each lock takes a
# slot of a table PostgreSQL sizes at its start (max_locks_per_transaction, 64 by default,
# × connections and workers, and spare memory): one a document ran out of it past about
# 6,000 documents in one transaction on a 1M store (a purge, a namespace cleared, a large
# add_many batch).
LOCK_EACH_MAX = 256
_LOCK_ONE = (
    f"SELECT pg_advisory_xact_lock_shared({locks.ALL_DOCUMENTS}, hashtext(current_schema())), "
    f"pg_advisory_xact_lock({locks.DOCUMENT}, hashtext(%s))"
)
_LOCK_ALL = f"SELECT pg_advisory_xact_lock({locks.ALL_DOCUMENTS}, hashtext(current_schema()))"
# Whether this transaction holds the lock over all documents exclusive, or already holds
# one it could deadlock with while waiting for it: that one shared, or the postings' lock.
_EXCLUSIVE = f"classid = {locks.ALL_DOCUMENTS}::int4::oid AND mode = 'ExclusiveLock'"
_HELD = (
    f"SELECT coalesce(bool_or({_EXCLUSIVE}), false), "
    f"coalesce(bool_or(NOT ({_EXCLUSIVE})), false) FROM pg_locks "
    "WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 2 "
    "AND objid = hashtext(current_schema())::oid AND classid IN "
    f"({locks.ALL_DOCUMENTS}::int4::oid, {locks.POSTINGS}::int4::oid)"
)

_WRITTEN = [*DOC_COLUMNS, "meta", "text_bytes"]
_UPSERT = (
    f"INSERT INTO document ({', '.join(_WRITTEN)}) VALUES ({', '.join(['%s'] * len(_WRITTEN))}) "
    f"ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _WRITTEN if c != "id")
)
_HEADER = [c for c in HEADER_COLUMNS if c != "id"] + ["meta"]
_UPDATE = f"UPDATE document SET {', '.join(f'{c} = %s' for c in _HEADER)} WHERE id = %s"
_INSERT_CHUNK = (
    f"INSERT INTO chunk ({CHUNK_COLUMNS}, words, words_len, grams, grams_len) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, to_tsvector('trove_words', %s), %s, %s::tsvector, %s) "
    "RETURNING id"
)


class DocumentStorage(Connected):
    """Mixin of the PostgreSQL backend: documents and their chunks."""

    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None:
        columns = DOC_COLUMNS if with_text else HEADER_COLUMNS
        if getattr(self._local, "conn", None) is not None:
            # Read inside a write: the writer decides from it, so writers of one id (even
            # one not stored yet, which no row lock covers) take turns until commit.
            self.one(_LOCK_ONE, (doc_id,))
        row = self.one(f"SELECT {', '.join(columns)} FROM document WHERE id = %s", (doc_id,))
        return None if row is None else document(columns, row)

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        query = f"SELECT {', '.join(DOC_COLUMNS)} FROM document WHERE {where} {tail}"
        return [document(DOC_COLUMNS, row) for row in self.rows(query, params)]

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        """Headers (no text) of several documents, by id."""
        if getattr(self._local, "conn", None) is not None:
            # Inside a write, as in get_document.
            with self.conn() as conn:
                _lock_documents(conn, sorted(set(doc_ids)))
        rows = self.rows(
            f"SELECT {', '.join(HEADER_COLUMNS)} FROM document WHERE id = ANY(%s)",
            (list(doc_ids),),
        )
        return {doc.id: doc for doc in (document(HEADER_COLUMNS, row) for row in rows)}

    def iter_documents(self, *, after: str | None, limit: int) -> list[Document]:
        """Every document (all namespaces, deleted and expired too), by id, a page at a time."""
        return self._documents(
            "(%s::text IS NULL OR id > %s)",
            (after, after),
            f"ORDER BY id LIMIT {int(limit)}",
        )

    def put_document(self, doc: Document, *, text: bool = True) -> None:
        """Insert or replace the row; ``text=False`` updates an existing row, text untouched."""
        with self.transaction(), self.conn() as conn:
            if text:
                conn.execute(_UPSERT, _upsert_params(doc))
            else:
                conn.execute(_UPDATE, _update_params(doc))

    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]:
        """Swap a document's chunks and their text-search vectors; returns (old ids, new ids)."""
        with self.transaction(), self.conn() as conn:
            cur = conn.execute("DELETE FROM chunk WHERE doc_id = %s RETURNING id", (doc_id,))
            dropped = [int(r[0]) for r in cur.fetchall()]
            ids: list[int] = []
            if chunks:
                with conn.cursor() as cur:
                    ids = _insert_chunks(cur, [_IndexedChunk(doc_id, row) for row in chunks])
        self._written()
        return dropped, ids

    def put_many(self, writes: Sequence[DocumentWrite]) -> tuple[list[int], list[int]]:
        """:meth:`put_document` and :meth:`replace_chunks` for a batch, in a few round
        trips: one pipelined ``executemany`` per kind of statement, not one per document.
        Returns (old chunk ids, new chunk ids), new ones in the order of ``writes``."""
        full = [w for w in writes if w.reindex]
        headers = [w for w in writes if not w.reindex]
        replaced = [w.doc.id for w in full if not w.fresh]
        chunks = [_IndexedChunk(w.doc.id, row) for w in full for row in w.chunks]
        dropped: list[int] = []
        ids: list[int] = []
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            if full:
                cur.executemany(_UPSERT, [_upsert_params(w.doc) for w in full])
            if headers:
                cur.executemany(_UPDATE, [_update_params(w.doc) for w in headers])
            if replaced:
                cur.execute("DELETE FROM chunk WHERE doc_id = ANY(%s) RETURNING id", (replaced,))
                dropped = [int(r[0]) for r in cur.fetchall()]
            if chunks:
                ids = _insert_chunks(cur, chunks)
        self._written()
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
            query, (list(doc_ids),)
        ):
            chunk = Chunk(index=idx, start=start, end=end, heading=str(heading))
            row = ChunkRow(chunk=chunk, head=str(head), text=str(text), text_hash=digest)
            found.setdefault(str(doc_id), []).append(
                (row, None if embedding is None else as_array(embedding))
            )
        return found

    def set_deleted(self, doc_id: str, when: float | None) -> bool:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "UPDATE document SET deleted_at = %s, updated_at = coalesce(%s, updated_at) "
                "WHERE id = %s",
                (when, when, doc_id),
            )
            return cur.rowcount > 0


class _IndexedChunk:
    """A chunk row with what is indexed of it: its postings (term counts and length under
    the word index's tokenizer) and its text-search vectors (for raw queries)."""

    def __init__(self, doc_id: str, row: ChunkRow) -> None:
        self.terms, self.length = postings.chunk_terms(row.head, row.text)
        words = text_index.words(row.head) + text_index.words(row.text)
        grams = text_index.grams(row.head) + text_index.grams(row.text)
        self.grams = len(grams)
        self.params = (
            *chunk_values(doc_id, row),
            " ".join(words),
            self.length,
            text_index.tsvector(grams),
            len(grams),
        )


def _insert_chunks(cur: psycopg.Cursor, chunks: Sequence[_IndexedChunk]) -> list[int]:
    """Insert chunks (one pipelined ``executemany``) and then their postings (one COPY);
    returns the new chunk ids in order."""
    cur.executemany(_INSERT_CHUNK, [c.params for c in chunks], returning=True)
    ids: list[int] = []
    while True:
        ids.append(int(cur.fetchone()[0]))  # type: ignore[index]
        if not cur.nextset():
            break
    postings.write(cur, ((i, c.terms, c.length) for i, c in zip(ids, chunks, strict=True)))
    postings.count_chunks(
        cur, len(chunks), sum(c.length for c in chunks), sum(c.grams for c in chunks)
    )
    return ids


def _upsert_params(doc: Document) -> list[Any]:
    values = row_values(doc)
    return [values[c] for c in _WRITTEN]


def _update_params(doc: Document) -> list[Any]:
    values = row_values(doc)
    return [values[c] for c in _HEADER] + [values["id"]]


def row_values(doc: Document) -> dict[str, Any]:
    """A document as column values, with what PostgreSQL keeps besides: the metadata as
    ``jsonb`` for filters, the text's size in bytes."""
    values = document_values(doc, list)
    values["meta"] = Jsonb(filterable(doc.metadata))
    values["text_bytes"] = len(doc.text.encode("utf-8"))
    return values


def document(columns: Sequence[str], row: Sequence[Any]) -> Document:
    return to_document(columns, row, tuple)


def _lock_documents(conn: psycopg.Connection, doc_ids: Sequence[str]) -> None:
    """Take the write locks of ``doc_ids`` (sorted) in this transaction: one each, or for
    more than LOCK_EACH_MAX of them the lock over all documents, unless this transaction
    took the other locks first (then one each, as it would deadlock waiting for it)."""
    if len(doc_ids) > LOCK_EACH_MAX:
        row = conn.execute(_HELD).fetchone()
        held_all, held_other = (bool(row[0]), bool(row[1])) if row else (False, False)
        if held_all:
            return
        if not held_other:
            conn.execute(_LOCK_ALL)
            return
    # One round trip: executemany pipelines the statements, in id order, so that two
    # writers of overlapping batches cannot wait on each other.
    with conn.cursor() as cur:
        cur.executemany(_LOCK_ONE, [(doc_id,) for doc_id in doc_ids])
