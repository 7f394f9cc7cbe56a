"""What a search hands back: each retriever's best chunk of a document (:class:`ChunkHit`)
and, after fusion, the :class:`Hit` a caller sees. Apart from :mod:`trove.models` so that
opening a store makes neither dataclass; ``trove.models`` still names both."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from trove.models import Chunk, Document


@dataclass(frozen=True)
class ChunkHit:
    r"""A document's best chunk for one retriever (keyword or vector), with that retriever's
    score: what a backend's search returns, before fusion makes :class:`Hit`\s."""

    doc_id: str
    chunk_id: int
    score: float
    chunk: Chunk


@dataclass(frozen=True)
class Hit:
    """One search result: a document, the chunk that matched best, and why it matched."""

    doc_id: str
    score: float
    title: str
    source: str
    source_id: str | None
    snippet: str
    chunk: Chunk
    namespace: str = "default"
    doc_type: str = ""
    author: str = ""
    participants: tuple[str, ...] = ()
    timestamp: str | None = None
    url: str = ""
    thread_id: str = ""
    channel: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str = "workspace"
    importance: float | None = None
    # Who wrote the document: explicit (an agent's own write), human or derived.
    author_tier: str = ""
    explain: dict[str, Any] | None = None
    # Set on documents that search(expand=...) added: the hit and edge that led here.
    linked_from: dict[str, Any] | None = None
    # In a store with write-time enrichment: whether the document's own text
    # (``original``) or its enrichment (``enriched``) gave this hit its best match.
    provenance: str | None = None
    confidence: float = 1.0
    entities: tuple[str, ...] = ()
    access_count: int = 0
    last_accessed: str | None = None
    created_at: str | None = None
    # search(with_text=True / context=N / max_tokens=N): the best chunk's clean text, its
    # neighbours ({index, position, text}), whether the budget cut it, and its tokens.
    text: str | None = None
    context: list[dict[str, Any]] | None = None
    truncated: bool = False
    tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["participants"] = list(self.participants)
        data["tags"] = list(self.tags)
        data["entities"] = list(self.entities)
        for optional in ("explain", "linked_from", "provenance", "text", "context", "tokens"):
            if data[optional] is None:
                del data[optional]
        if self.text is None:
            del data["truncated"]
        return data


@dataclass(frozen=True)
class HitDetails:
    """What search shows of its hits, read together: each document's header (no text),
    the first characters of its text and its passage (chunk id and chunk), by document
    id; each passage's snippet, by chunk id."""

    documents: dict[str, Document]
    texts: dict[str, str]
    snippets: dict[int, str]
    passages: dict[str, tuple[int, Chunk]] = field(default_factory=dict)
