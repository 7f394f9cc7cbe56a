"""What a write hands a backend: each chunk as a row to store (:class:`ChunkRow`) and each
document of a batch (:class:`DocumentWrite`). Apart from :mod:`trove.backends.base`, which
names them only in signatures: opening a store makes neither dataclass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trove.models import Chunk, Document


@dataclass(frozen=True)
class ChunkRow:
    """A chunk ready to store: its span, the text it covers and what is indexed with it."""

    chunk: Chunk
    head: str
    text: str
    text_hash: str
    # What the embedder sees, when not the head and text (an entry's semantic_text).
    embed: str | None = None


@dataclass(frozen=True)
class DocumentWrite:
    """One document of a batch write: ``reindex`` replaces its chunks with ``chunks``
    (else only its header changes); ``fresh``: no row of it is stored yet."""

    doc: Document
    reindex: bool
    chunks: Sequence[ChunkRow]
    fresh: bool
