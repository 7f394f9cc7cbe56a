"""What a document record of a trove export must be before import stores it.

An export is a file anyone can edit, so import trusts none of it: each record is checked
as :meth:`Store.add` checks an item (through :func:`trove.write.prepare`, the one
validation), and its chunk spans against its text (in order, inside the text, covering
every character a search should find). A record that fails is refused with its line
number, before anything of its batch is written.
"""

from __future__ import annotations

import hashlib
from dataclasses import fields
from typing import Any

from trove.backends.writes import ChunkRow
from trove.errors import InvalidInput
from trove.memory import entry
from trove.models import Chunk, Document
from trove.search import snippet_text
from trove.search.filters import SCOPES
from trove.timeutil import to_epoch
from trove.write import ADD_FIELDS, chunk_row, prepare

FIELDS = tuple(f.name for f in fields(Document))
_TIMES = ("timestamp", "created_at", "updated_at", "deleted_at", "expires_at", "last_accessed")
# Document fields that are add() arguments of the same name.
_ADDED = tuple(name for name in FIELDS if name in ADD_FIELDS)


def document(record: dict[str, Any]) -> tuple[Document, list[ChunkRow]]:
    """The document of a ``document`` record and its chunk rows; InvalidInput if the
    record is not one ``add`` would have stored."""
    data = record.get("document")
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not data["id"]:
        raise InvalidInput("a document record needs a document with an id")
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise InvalidInput(f"unknown document field {', '.join(sorted(unknown))}")
    text = data.get("text")
    if not isinstance(text, str):
        raise InvalidInput(f"document {data['id']}: text must be a string")
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != data.get("content_hash"):
        raise InvalidInput(f"document {data['id']}: text does not match its content_hash")
    _check_types(data)
    try:
        _as_added(data)
    except InvalidInput as exc:
        raise InvalidInput(f"document {data['id']}: {exc}") from None
    values = dict(data)
    values["participants"] = tuple(data.get("participants") or ())
    values["tags"] = tuple(data.get("tags") or ())
    values["entities"] = tuple(data.get("entities") or ())
    values["source_turn_ids"] = tuple(data.get("source_turn_ids") or ())
    values["metadata"] = dict(data.get("metadata") or {})
    doc = Document(**values)
    return doc, _chunks(doc, record.get("chunks"))


def _as_added(data: dict[str, Any]) -> None:
    """Refuse what ``add`` refuses: an empty namespace, a session item without its
    session, NaN importance, metadata nested too deep, NUL in a key, ..."""
    item = {name: data[name] for name in _ADDED if data.get(name) is not None}
    if data.get("session_id"):
        item["session"] = data["session_id"]
    item["index"] = data.get("indexed", "both")
    prepare(item, author_tier=data.get("author_tier") or "explicit", doc_id=data["id"])
    for name in ("created_at", "updated_at"):
        if data.get(name) is None:
            raise InvalidInput(f"{name} is missing")


def _check_types(data: dict[str, Any]) -> None:
    """What a stored document may hold, checked before anything reaches the backend."""
    doc_id = data["id"]
    for name, value in data.items():
        if name in _TIMES:
            if value is not None:
                to_epoch(value, field=f"document {doc_id}: {name}")
        elif name in ("source_id", "dedupe_key", "canonical_id", "keyword_text", "semantic_text"):
            ok = value is None or isinstance(value, str)
        elif name in ("participants", "tags", "entities", "source_turn_ids"):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif name == "metadata":
            ok = isinstance(value, dict)
        elif name in ("importance", "confidence"):
            ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool))
        elif name in ("compression_level", "access_count"):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if name not in _TIMES and not ok:
            raise InvalidInput(f"document {doc_id}: {name} has the wrong type ({value!r})")
    if data.get("scope", "workspace") not in SCOPES:
        raise InvalidInput(f"document {doc_id}: unknown scope {data.get('scope')!r}")


def _chunks(doc: Document, spans: Any) -> list[ChunkRow]:
    """The chunk rows of ``spans``: numbered 0, 1, ... in order, inside the text, and
    leaving out nothing but blank space (and the front matter and comments that writes
    blank); an entry under entry control is the one span of its whole text."""
    if spans is None:
        spans = []
    if not isinstance(spans, list):
        raise InvalidInput(f"document {doc.id}: chunks must be a list")
    chunks = [_chunk(doc, i, span) for i, span in enumerate(spans)]
    if entry.controlled(doc):
        if [(c.start, c.end) for c in chunks] != [(0, len(doc.text))]:
            raise InvalidInput(f"document {doc.id}: an entry is one chunk of its whole text")
        return entry.rows(doc)
    clean = snippet_text.mask(doc.text, doc.doc_type)
    covered = 0
    for chunk in sorted(chunks, key=lambda c: c.start):
        if clean[covered : chunk.start].strip():  # a gap with something to find in it
            raise InvalidInput(f"document {doc.id}: its chunks do not cover its text")
        covered = max(covered, chunk.end)
    if clean[covered:].strip():
        raise InvalidInput(f"document {doc.id}: its chunks do not cover its text")
    return [chunk_row(doc, chunk, clean) for chunk in chunks]


def _chunk(doc: Document, number: int, span: Any) -> Chunk:
    try:
        index, start, end, heading = span
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (index, start, end)):
            raise TypeError
        chunk = Chunk(index=index, start=start, end=end, heading=str(heading))
    except (TypeError, ValueError):
        raise InvalidInput(f"document {doc.id}: a chunk is [index, start, end, heading]") from None
    if chunk.index != number:
        raise InvalidInput(f"document {doc.id}: chunk {number} is numbered {chunk.index}")
    if not 0 <= chunk.start <= chunk.end <= len(doc.text):
        raise InvalidInput(f"document {doc.id}: chunk {chunk.index} lies outside its text")
    return chunk
