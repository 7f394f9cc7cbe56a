"""The values trove hands back: documents, chunks, edges, pages and store statistics;
and, from :mod:`trove.hits`, search hits (``trove.models.Hit`` still names them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from trove.timeutil import now, to_epoch

if TYPE_CHECKING:
    from trove.hits import ChunkHit as ChunkHit
    from trove.hits import Hit as Hit

_T = TypeVar("_T")


def assemble(cls: type[_T], values: Mapping[str, Any]) -> _T:
    """``cls(**values)`` for one of these frozen dataclasses (none has a
    ``__post_init__``) when ``values`` holds every field: the attributes set at once, not
    one ``object.__setattr__`` each. A Document has 33 fields, a Hit 30: reading a
    search's rows, building its hits and preparing a bulk write's documents spent most
    of their time there."""
    built = object.__new__(cls)
    built.__dict__.update(values)
    return built


# Search modes; here, not in store.py, so the CLI can list them without loading the store.
MODES = ("keyword", "semantic", "hybrid")
# How hybrid search fuses its lists (trove.search.fusion); here so that opening a store
# checks the name without loading the fusion code.
FUSIONS = ("convex", "rrf")


@dataclass(frozen=True)
class Document:
    """One stored thing, with its full text exactly as given and where it came from.

    Times are ISO-8601 UTC strings (``2026-11-03T09:00:00Z``) or None.
    """

    id: str
    text: str
    namespace: str = "default"
    scope: str = "workspace"
    session_id: str = ""
    source: str = ""
    source_id: str | None = None
    dedupe_key: str | None = None
    doc_type: str = ""
    title: str = ""
    author: str = ""
    participants: tuple[str, ...] = ()
    timestamp: str | None = None
    url: str = ""
    thread_id: str = ""
    channel: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    importance: float | None = None
    author_tier: str = ""
    created_at: str | None = None
    updated_at: str | None = None
    deleted_at: str | None = None
    expires_at: str | None = None
    # Agent memory (issue 16): see trove.memory. The store keeps access_count,
    # last_accessed and canonical_id itself; a write never changes them.
    confidence: float = 1.0
    compression_level: int = 0
    entities: tuple[str, ...] = ()
    source_turn_ids: tuple[str, ...] = ()
    canonical_id: str | None = None
    access_count: int = 0
    last_accessed: str | None = None
    # Which indexes hold the entry: both, keyword, semantic or none; and the texts they
    # index instead of the stored text (None: the stored text).
    indexed: str = "both"
    keyword_text: str | None = None
    semantic_text: str | None = None

    @property
    def expired(self) -> bool:
        """True once ``expires_at`` has passed (the item is then gone from search and get)."""
        expires = to_epoch(self.expires_at)
        return expires is not None and expires <= now()

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["participants"] = list(self.participants)
        data["tags"] = list(self.tags)
        data["entities"] = list(self.entities)
        data["source_turn_ids"] = list(self.source_turn_ids)
        data["expired"] = self.expired
        data["deleted"] = self.deleted
        return data


# The document table's columns are exactly these fields, in every backend.
DOCUMENT_FIELDS = tuple(f.name for f in fields(Document))
# Set by the store itself; never compared when deciding whether a write changes anything.
STAMP_FIELDS = ("id", "created_at", "updated_at", "deleted_at")
# Kept by the store across writes of a document (a re-add does not reset its use).
CARRIED_FIELDS = ("access_count", "last_accessed", "canonical_id")
# What must match for a copied document (trove migrate, trove import) to count as the
# one already stored: nothing to copy.
_SAME_COPY = (
    "content_hash",
    "updated_at",
    "deleted_at",
    "expires_at",
    "title",
    "tags",
    "metadata",
)


def same_copy(old: Document | None, new: Document) -> bool:
    """Whether ``old`` (a store's copy, or None) is already ``new``."""
    return old is not None and all(getattr(old, f) == getattr(new, f) for f in _SAME_COPY)


@dataclass(frozen=True)
class Chunk:
    """A span ``text[start:end]`` of a document, with the Markdown headings above it."""

    index: int
    start: int
    end: int
    heading: str = ""


@dataclass(frozen=True)
class Edge:
    """A typed, weighted link from one document to another."""

    src: str
    dst: str
    type: str
    weight: float = 1.0
    created_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Page:
    """One page of :meth:`Store.list`; pass ``cursor`` back to get the next one."""

    items: list[Document]
    cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"items": [d.to_dict() for d in self.items], "cursor": self.cursor}


@dataclass(frozen=True)
class Stats:
    """What a store holds; computing it never loads an embedding model."""

    documents: int
    chunks: int
    deleted: int
    expired: int
    by_source: dict[str, int]
    by_doc_type: dict[str, int]
    by_namespace: dict[str, int]
    text_bytes: int
    file_bytes: int
    schema_version: int
    embedder: dict[str, Any] | None
    vectors: int
    # LLM query expansion in this process: cache hits, model calls, failures, hit rate.
    expansion_cache: dict[str, Any] | None = None
    # Chunks semantic search cannot find (written keyword-only, or kept out of it).
    chunks_without_vectors: int = 0
    # The file records that it was made without an embedder (switch with reembed).
    keyword_only: bool = False
    # Derived index caches beside the file (SQLite: <store>.trove-index/, the vector index
    # and word postings; rebuildable, but disk the store takes), of the whole store.
    cache_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def __getattr__(name: str) -> Any:
    """``trove.models.Hit`` and ``ChunkHit``, from :mod:`trove.hits` at their first use:
    opening a store and counting it (trove stats) make neither dataclass (about 11 M
    instructions of a fresh process; python bench/coldstart.py)."""
    if name in ("ChunkHit", "Hit"):
        from trove import hits

        return getattr(hits, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
