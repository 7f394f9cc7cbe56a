"""Chunks a caller cuts a document into itself: ``add_many([{"text": ..., "chunks":
[[0, 120], [120, 300, "Heading"]]}])``, ``chunks`` on ``POST /v1/items`` and
``knowledge_write``.

Each span is ``[start, end]`` or ``[start, end, heading]``, in characters of the text; the
spans come in order of their starts, none empty, may overlap, and leave out nothing but
blank space (and the front matter and comments a write blanks), as the store's own chunks
do, so ``get`` and ``trove check`` hold. They are checked as the item is prepared, before
anything of its batch is written, and kept until the document is cut again: an update of
its text or title, or :meth:`Store.rechunk`, cuts it with the store's settings unless
chunks are given again.
"""

from __future__ import annotations

from typing import Any

from trove import validate
from trove.backends.writes import ChunkRow
from trove.errors import InvalidInput
from trove.memory import entry
from trove.models import Chunk, Document
from trove.search import snippet_text
from trove.write import chunk_row

# Chunks one write may cut a document into.
MAX_GIVEN_CHUNKS = 10_000


def given_chunks(doc: Document, spans: Any) -> list[ChunkRow]:
    """The chunks a caller cut ``doc`` into: ``[start, end]`` or ``[start, end, heading]``
    spans of its text, in order of their starts, none empty, leaving out nothing but
    blank space (and the front matter and comments a write blanks); they may overlap."""
    if entry.controlled(doc):
        raise InvalidInput("chunks: an entry under entry control is one span of its text")
    if not isinstance(spans, list | tuple) or not 0 < len(spans) <= MAX_GIVEN_CHUNKS:
        raise InvalidInput(f"chunks must be a list of 1 to {MAX_GIVEN_CHUNKS} spans")
    clean = snippet_text.mask(doc.text, doc.doc_type)
    chunks: list[Chunk] = []
    covered = 0
    for i, span in enumerate(spans):
        start, end, heading = _span(span, i)
        after = chunks[-1].start if chunks else 0
        if not after <= start < end <= len(doc.text):
            raise InvalidInput(
                f"chunks[{i}] ({start}, {end}) must lie inside the text ({len(doc.text)} "
                "characters), not be empty, and start after the chunk before it"
            )
        if clean[covered:start].strip():
            raise InvalidInput(f"chunks leave out text before chunks[{i}] (from {covered})")
        chunks.append(Chunk(index=i, start=start, end=end, heading=heading))
        covered = max(covered, end)
    if clean[covered:].strip():
        raise InvalidInput(f"chunks leave out the text after character {covered}")
    return [chunk_row(doc, chunk, clean) for chunk in chunks]


def _span(span: Any, i: int) -> tuple[int, int, str]:
    if isinstance(span, list | tuple) and len(span) in (2, 3):
        start, end, heading = (*span, "")[:3]
        if type(start) is int and type(end) is int and isinstance(heading, str):
            return start, end, validate.unicode(heading, f"chunks[{i}] heading")
    raise InvalidInput(f"chunks[{i}] must be [start, end] or [start, end, heading]")
