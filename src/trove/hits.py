"""What a search hands back: each retriever's best chunk of a document (:class:`ChunkHit`)
and, after fusion, the :class:`Hit` a caller sees. Apart from :mod:`trove.models` so that
opening a store makes neither dataclass; ``trove.models`` still names both."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from trove.models import Chunk, Document


@dataclass(frozen=True)
class ChunkHit:
    r"""A document's best chunk for one retriever (keyword or vector), with that retriever's
    score: what a backend's search returns, before fusion makes :class:`Hit`\s."""

    doc_id: str
    chunk_id: int
    score: float
    chunk: Chunk


class Shown(Protocol):
    """What the hits of one search show, chosen when the first of them is read: each
    hit's passage (the chunk that matched best) and snippet, by document id."""

    def of(self, doc_id: str) -> tuple[Chunk, str]: ...


# A hit's fields a search may leave to its first reading (search/passage.py).
DEFERRED = ("chunk", "snippet")


@dataclass(frozen=True)
class Hit:
    """One search result: a document, the chunk that matched best, and why it matched.

    A search's hits choose their passages (``chunk`` and ``snippet``) when the first of
    them is read, all at once: a caller that reads only ids and scores (a pipeline that
    fetches documents, an evaluation) does not pay for them. Reading, comparing, copying
    or replacing a hit reads them; the values are those an eager choice gives.
    """

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

    if not TYPE_CHECKING:  # to a type checker a hit has only its fields

        def __getattr__(self, name: str) -> Any:
            # Reached only for a name the hit lacks: a deferred field, not chosen yet.
            shown = self.__dict__.get("_shown")
            if shown is not None and name in DEFERRED:
                chunk, snippet = shown.of(self.doc_id)
                self.__dict__.update(chunk=chunk, snippet=snippet)
                self.__dict__.pop("_shown", None)
            try:  # set here, or by another thread reading the hit at the same time
                return self.__dict__[name]
            except KeyError:
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute {name!r}"
                ) from None

    def __getstate__(self) -> dict[str, Any]:
        """What copy and pickle take: the fields, a deferred passage chosen first."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

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
class Chosen:
    """Each document's passage (chunk id and chunk) and each passage's snippet."""

    chunks: dict[str, tuple[int, Chunk]]
    snippets: dict[int, str]


class Passages(Protocol):
    """The passages of a search's hits, chosen once, when first asked for."""

    def chosen(self) -> Chosen: ...


@dataclass(frozen=True)
class HitDetails:
    """What search shows of its hits, read together: each document's header (no text)
    and the first characters of its text, by document id; their passages."""

    documents: dict[str, Document]
    texts: dict[str, str]
    passages: Passages
