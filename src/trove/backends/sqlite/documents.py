"""Document and chunk rows of the SQLite backend: written, read, mapped to documents."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trove.backends.rows import (
    DOC_COLUMNS,
    HEADER_COLUMNS,
    LIST_COLUMNS,
    TIME_COLUMNS,
    to_document,
)
from trove.backends.sqlite.bulk import insert_chunks, put_many, upsert_sql, write_documents
from trove.backends.sqlite.chunk_text import TEXT_OF_C
from trove.backends.sqlite.connection import BULK_CHECKPOINT_PAGES, Connected, checkpoint_every
from trove.backends.sqlite.vector_index.codes import decode
from trove.models import DOCUMENT_FIELDS, Chunk, Document, assemble
from trove.timeutil import to_epoch, to_iso

if TYPE_CHECKING:
    import numpy as np

    from trove.backends import writes as write_rows
    from trove.backends.writes import ChunkRow, DocumentWrite
else:  # numpy loads where first used: opening a store, stats, keyword search need none;
    # the write rows' dataclasses, at the first write or export
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    write_rows = LazyModule("trove.backends.writes")


class DocumentStorage(Connected):
    """Mixin of the SQLite backend: documents and their chunks."""

    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None:
        columns = DOC_COLUMNS if with_text else HEADER_COLUMNS
        row = self._one(f"SELECT {', '.join(columns)} FROM document WHERE id = ?", (doc_id,))
        return None if row is None else document(columns, row)

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        sql = f"SELECT {', '.join(DOC_COLUMNS)} FROM document WHERE {where} {tail}"
        return [document(DOC_COLUMNS, row) for row in self.conn.execute(sql, tuple(params))]

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        """Headers (no text) of several documents, by id."""
        found: dict[str, Document] = {}
        for start in range(0, len(doc_ids), 500):
            part = doc_ids[start : start + 500]
            marks = ", ".join("?" * len(part))
            sql = f"SELECT {', '.join(HEADER_COLUMNS)} FROM document WHERE id IN ({marks})"
            for row in self.conn.execute(sql, tuple(part)):
                doc = document(HEADER_COLUMNS, row)
                found[doc.id] = doc
        return found

    def put_document(self, doc: Document, *, text: bool = True) -> None:
        """Insert or replace the row; ``text=False`` updates an existing row, text untouched."""
        values = _row(doc)
        with self.transaction():
            if not text:
                sets = ", ".join(f"{c} = ?" for c in HEADER_COLUMNS if c != "id")
                params = [values[c] for c in HEADER_COLUMNS if c != "id"]
                self.conn.execute(f"UPDATE document SET {sets} WHERE id = ?", (*params, doc.id))
                return
            # Counted and logged if new (no insert trigger does it: bulk.py).
            write_documents(
                self.conn, upsert_sql(DOC_COLUMNS), [tuple(values[c] for c in DOC_COLUMNS)]
            )

    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]:
        """Swap a document's chunks (the delete triggers and bulk.py index and count
        them); returns (old ids, new ids)."""
        with self.transaction():
            dropped = [
                int(r[0])
                for r in self.conn.execute("SELECT id FROM chunk WHERE doc_id = ?", (doc_id,))
            ]
            self.conn.execute("DELETE FROM chunk WHERE doc_id = ?", (doc_id,))
            ids = insert_chunks(self.conn, doc_id, chunks)
            self._index_changes.chunks(dropped, ids)
            return dropped, ids

    def put_many(self, writes: Sequence[DocumentWrite]) -> tuple[list[int], list[int]]:
        """:meth:`put_document` and :meth:`replace_chunks` for a batch, in a few
        statements (bulk.py); returns (old chunk ids, new chunk ids)."""
        if not self.memory:  # until the caller folds the log (connection.py)
            checkpoint_every(self.conn, BULK_CHECKPOINT_PAGES)
        with self.transaction():
            dropped, ids = put_many(self.conn, writes, DOC_COLUMNS, _row)
            self._index_changes.chunks(dropped, ids)
            return dropped, ids

    def export_chunks(
        self, doc_ids: Sequence[str], table: str | None
    ) -> dict[str, list[tuple[ChunkRow, np.ndarray | None]]]:
        """The stored chunks of documents in order, each with its vector from ``table``
        (None where it has none): what copying a store needs."""
        vector = f"(SELECT codes FROM {table} v WHERE v.id = c.id)" if table else "NULL"
        rows = self.conn.execute(
            f"SELECT c.doc_id, c.idx, c.start_char, c.end_char, c.heading, c.head, {TEXT_OF_C}, "
            f"c.text_hash, {vector} FROM chunk c "
            "WHERE c.doc_id IN (SELECT value FROM json_each(?)) ORDER BY c.doc_id, c.idx",
            (json.dumps(list(doc_ids)),),
        )
        found: dict[str, list[tuple[ChunkRow, np.ndarray | None]]] = {}
        for doc_id, idx, start, end, heading, head, text, digest, blob in rows:
            chunk = Chunk(index=idx, start=start, end=end, heading=heading)
            embedding = None if blob is None else decode([blob])[0]
            found.setdefault(str(doc_id), []).append(
                (write_rows.ChunkRow(chunk, head, text, digest), embedding)
            )
        return found

    def iter_documents(self, *, after: str | None, limit: int) -> list[Document]:
        """Every document (all namespaces, deleted and expired too), by id, a page at a time."""
        return self._documents(
            "(?1 IS NULL OR id > ?1)", (after,), f"ORDER BY id LIMIT {int(limit)}"
        )

    def set_deleted(self, doc_id: str, when: float | None) -> bool:
        with self.transaction():
            self.conn.execute(
                "UPDATE document SET deleted_at = ?, updated_at = coalesce(?, updated_at) "
                "WHERE id = ?",
                (when, when, doc_id),
            )
            return self.conn.changes() > 0


def _row(doc: Document) -> dict[str, Any]:
    """:func:`document_values` with SQLite's lists (JSON text), made faster: a bulk write
    makes one a document. Every field is a column; empty lists and metadata, the usual
    case, skip the JSON encoder; a batch's documents share their times, parsed once."""
    values = dict(vars(doc))
    for column in LIST_COLUMNS:
        values[column] = _json_list(values[column])
    metadata = doc.metadata
    values["metadata"] = (
        json.dumps(metadata, ensure_ascii=False, sort_keys=True) if metadata else "{}"
    )
    for column in TIME_COLUMNS:
        value = values[column]
        if value is not None:
            values[column] = _epoch(value, column)
    return values


@functools.lru_cache(maxsize=4096)
def _epoch(value: str, column: str) -> float | None:
    return to_epoch(value, field=column)


def document(columns: Sequence[str], row: Sequence[Any]) -> Document:
    if columns is not HEADER_COLUMNS or not _HEADER_AND_TEXT:
        return to_document(columns, row, _read_list)
    # to_document's result for a header row (search maps one for every hit), without its
    # calls for the values most rows hold: empty lists and metadata, no time.
    values = dict(zip(HEADER_COLUMNS, row, strict=True))
    for column in LIST_COLUMNS:
        value = values[column]
        values[column] = () if value == "[]" else tuple(json.loads(value))
    metadata = values["metadata"]
    values["metadata"] = {} if metadata == "{}" else json.loads(metadata)
    for column in TIME_COLUMNS:
        value = values[column]
        if value is not None:
            values[column] = _iso(value)
    values["text"] = ""
    return assemble(Document, values)  # every field given


# A header row and the text are every field of a Document (else to_document maps it).
_HEADER_AND_TEXT = {*HEADER_COLUMNS, "text"} == set(DOCUMENT_FIELDS)
# The same few epoch values recur (one write's stamps), as in to_document.
_iso = functools.lru_cache(maxsize=16_384)(to_iso)


def _read_list(value: str) -> Any:
    # Most list columns are empty: no JSON parse for them (four a document, every hit).
    return () if value == "[]" else json.loads(value)


def _json_list(values: Sequence[str]) -> str:
    if not values:  # most lists are empty: four of them a row
        return "[]"
    return json.dumps(list(values), ensure_ascii=False)
