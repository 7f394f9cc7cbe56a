"""What a write hands a backend: each chunk as a row to store (:class:`ChunkRow`), each
document of a batch (:class:`DocumentWrite`) and the chunks' vectors (:class:`Vectors`).
Apart from :mod:`trove.backends.base` and the vectorizer, which name them only in
signatures: opening a store makes none of these dataclasses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trove.models import Chunk, Document

if TYPE_CHECKING:
    import numpy as np


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


@dataclass(frozen=True)
class Vectors:
    """Vectors for a list of chunk rows, in order, bound for one vector table."""

    table: str
    matrix: np.ndarray
