"""Documents (and chunks) as table rows, the same for both backends: the columns, times as epoch
seconds, metadata as JSON text. Only the list columns (tags, entities, ...) differ: each
backend says how it stores a list (SQLite: JSON text; PostgreSQL: a ``text[]``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from trove.models import DOCUMENT_FIELDS, Chunk, Document, assemble
from trove.timeutil import to_epoch, to_iso

if TYPE_CHECKING:  # only in signatures: opening a store makes no ChunkRow dataclass
    from trove.backends.writes import ChunkRow
    from trove.search import passage
else:  # at the first search
    from trove.lazy import LazyModule

    passage = LazyModule("trove.search.passage")

DOC_COLUMNS = list(DOCUMENT_FIELDS)
HEADER_COLUMNS = [c for c in DOC_COLUMNS if c != "text"]
TIME_COLUMNS = (
    "timestamp",
    "created_at",
    "updated_at",
    "deleted_at",
    "expires_at",
    "last_accessed",
)
LIST_COLUMNS = ("participants", "tags", "entities", "source_turn_ids")


def document_values(doc: Document, store_list: Callable[[Sequence[str]], Any]) -> dict[str, Any]:
    """A document as column values; ``store_list`` makes a list column's value."""
    values: dict[str, Any] = {c: getattr(doc, c) for c in DOC_COLUMNS}
    for column in LIST_COLUMNS:
        values[column] = store_list(values[column])
    values["metadata"] = json.dumps(doc.metadata, ensure_ascii=False, sort_keys=True)
    for column in TIME_COLUMNS:
        values[column] = to_epoch(values[column], field=column)
    return values


def to_document(
    columns: Sequence[str], row: Sequence[Any], read_list: Callable[[Any], Sequence[str]]
) -> Document:
    """The document a row holds (``columns`` name its values; without "text", the text is
    empty); ``read_list`` reads a list column's value."""
    values = dict(zip(columns, row, strict=True))
    for column in LIST_COLUMNS:
        values[column] = tuple(read_list(values[column]))
    values["metadata"] = json.loads(values["metadata"])
    for column in TIME_COLUMNS:
        values[column] = _iso(values[column])
    values.setdefault("text", "")
    if values.keys() != _FIELDS:
        return Document(**values)
    return assemble(Document, values)


# What search shows of its hits, read in one statement by each backend (hit_details):
# a document ``d``'s header, then the start of its text, then a chunk ``c`` of it.
HEADER_OF_D = ", ".join(f"d.{column}" for column in HEADER_COLUMNS)
CHUNK_OF_C = "c.id, c.text, c.idx, c.start_char, c.end_char, c.heading"
_WIDTH = len(HEADER_COLUMNS)


def hit_rows(
    rows: Iterable[Sequence[Any]], read: Callable[[Sequence[str], Sequence[Any]], Document]
) -> tuple[dict[str, Document], dict[str, str], dict[str, list[passage.Passage]]]:
    """Rows of :data:`HEADER_OF_D`, a text's start and :data:`CHUNK_OF_C` (NULLs for a
    document whose chunks were not read: it still counts) as the documents and their
    texts' starts by document id, and the chunks read of each; ``read`` makes a
    document of a header row (the backend's own)."""
    documents: dict[str, Document] = {}
    texts: dict[str, str] = {}
    chunks: dict[str, list[passage.Passage]] = {}
    for row in rows:
        doc_id = row[0]
        if doc_id not in documents:
            documents[doc_id] = read(HEADER_COLUMNS, row[:_WIDTH])
            texts[doc_id] = str(row[_WIDTH])
            chunks[doc_id] = []
        cid, text, index, start, end, heading = row[_WIDTH + 1 :]
        if cid is not None:
            # assemble(): a frozen dataclass's __init__ sets each field by a call (18 chunk
            # rows of a SciFact search, two objects each)
            values = {"index": int(index), "start": int(start), "end": int(end)}
            chunk = assemble(Chunk, {**values, "heading": str(heading)})
            found = {"chunk_id": int(cid), "chunk": chunk, "text": str(text)}
            chunks[doc_id].append(assemble(passage.Passage, found))
    return documents, texts, chunks


_FIELDS = frozenset(DOCUMENT_FIELDS)
# The same few epoch values recur (a document read again, one write's stamps).
_iso = functools.lru_cache(maxsize=16_384)(to_iso)


# The columns every chunk row has, in the order of :func:`chunk_values`.
CHUNK_COLUMNS = "doc_id, idx, start_char, end_char, heading, head, text, text_hash"


def chunk_values(doc_id: str, row: ChunkRow) -> tuple[Any, ...]:
    """A chunk of ``doc_id`` as the values of :data:`CHUNK_COLUMNS`."""
    c = row.chunk
    return (doc_id, c.index, c.start, c.end, c.heading, row.head, row.text, row.text_hash)
