"""What the operations on a store need of it, as protocols, and the little state they
keep for it (:class:`Memos`).

:class:`~trove.store.Store` satisfies every protocol here. The modules that take one
(memory/, originals, enrich, expansion, agent, the bodies of the store's writes and
searches) name it, never ``Store``, so none of them depends on the façade that calls it
and each says what it uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from trove.backends.base import Backend
    from trove.embedders.vectorizer import Vectorizer
    from trove.events import Events
    from trove.expansion_counts import CacheCounts
    from trove.llm import ChatModel
    from trove.models import Document
    from trove.search.hybrid import HybridSearch
    from trove.write import Writer, WriteResult


@dataclass
class Memos:
    """What the agent loop remembers of one store between calls: its settings as last
    read and whether it has any enrichment (each with the monotonic time it was read),
    and the query expansions made in this process."""

    settings: tuple[float, dict[str, str]] | None = None
    enriched: tuple[float, bool] | None = None
    expansions: dict[tuple[str, str], Any] = field(default_factory=dict)


class WithBackend(Protocol):
    """A store reduced to the backend that keeps its rows and indexes."""

    @property
    def backend(self) -> Backend: ...


class Transacting(WithBackend, Protocol):
    """A store's backend, its events, and its transaction (writes inside one commit
    together; their events are heard after the commit)."""

    @property
    def events(self) -> Events: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    def notify(self, kind: str, doc: Document) -> None: ...
    def peek(self, doc_id: str) -> Document | None: ...


class Agentive(WithBackend, Protocol):
    """What the agent loop (settings, expansion, enrichment, search variants) uses: the
    chat model, the vectorizer, the hybrid search, and its memos."""

    @property
    def memos(self) -> Memos: ...
    @property
    def has_embedder(self) -> bool: ...
    @property
    def llm(self) -> ChatModel | None: ...
    @property
    def vectors(self) -> Vectorizer: ...
    @property
    def expansion_counts(self) -> CacheCounts: ...
    @property
    def hybrid_search(self) -> HybridSearch: ...


class Searching(Agentive, Protocol):
    """What the store's search pipeline (trove.store_search) uses."""

    def has_duplicates(self) -> bool: ...


class Writing(Transacting, Agentive, Protocol):
    """What the bodies of the store's writes (trove.store_writes) use."""

    @property
    def author_tier(self) -> str: ...
    @property
    def writer(self) -> Writer: ...
    @property
    def max_original_bytes(self) -> int | None: ...
    def write_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        author_tier: str | None = None,
        enrich: bool | None = None,
        on_conflict: str = "replace",
    ) -> list[WriteResult]: ...
