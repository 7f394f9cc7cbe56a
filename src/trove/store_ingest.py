"""The store as ingest sees it (:class:`trove.ingest.target.Target`): an object given the
store's parts ingest uses (its writer, backend and a few store operations), so that the
store carries no underscore methods for ingest and ingest knows nothing of the store."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from trove.backends.base import WriteLog
from trove.ingest import ownership
from trove.originals import Holder

if TYPE_CHECKING:
    from trove.backends.base import Backend
    from trove.backends.file_state import FileState
    from trove.models import Document, Edge
    from trove.write import Writer, WriteResult


class IngestingStore(Holder, Protocol):
    """What ingest uses of a store: its writer and backend, the public operations below,
    and what keeping an original needs."""

    @property
    def backend(self) -> Backend: ...
    @property
    def writer(self) -> Writer: ...
    @property
    def author_tier(self) -> str: ...
    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]: ...
    def delete(self, doc_id: str) -> bool: ...
    def link(self, src: str, dst: str, type: str = "relates_to", weight: float = 1.0) -> Edge: ...
    def unlink(self, src: str, dst: str, type: str | None = None) -> int: ...
    def transaction(self) -> AbstractContextManager[None]: ...


class StoreTarget:
    """What one :meth:`Store.ingest` run writes through and reads from."""

    def __init__(self, store: IngestingStore) -> None:
        self.store = store
        self.backend = store.backend
        self.writer = store.writer

    # The store's public operations ingest uses.

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        return self.store.iter_source(namespace, source)

    def delete(self, doc_id: str) -> bool:
        return self.store.delete(doc_id)

    def link(self, src: str, dst: str, type: str = "relates_to", weight: float = 1.0) -> Any:
        return self.store.link(src, dst, type, weight)

    def unlink(self, src: str, dst: str, type: str | None = None) -> int:
        return self.store.unlink(src, dst, type)

    def transaction(self) -> AbstractContextManager[None]:
        return self.store.transaction()

    # Ingest's own services.

    def prepare(self, fields: Mapping[str, Any], doc_id: str | None) -> Document:
        return self.writer.prepare(fields, author_tier=self.store.author_tier, doc_id=doc_id)

    def write_prepared(self, docs: Sequence[Document]) -> list[WriteResult]:
        return self.writer.write(docs)

    def documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        return self.backend.get_documents(list(doc_ids))

    def edges_from(self, doc_id: str, type: str) -> list[str]:
        return [e.dst for e in self.backend.edges_of([doc_id], type) if e.src == doc_id]

    def attach_original(
        self, doc_id: str, original: bytes | os.PathLike[str] | str, name: str, media_type: str
    ) -> None:
        from trove import originals  # at the first original kept

        originals.attach(self.store, doc_id, original, name, media_type)

    def with_originals(self, doc_ids: Sequence[str]) -> set[str]:
        return self.backend.with_originals(doc_ids)

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        return self.backend.file_states(namespace, source)

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        self.backend.set_file_states(namespace, source, states)

    def edited_files(self, namespace: str, source: str) -> set[str]:
        return ownership.edited_files(self.backend, namespace, source)

    def fold_log(self) -> None:
        if isinstance(self.backend, WriteLog):
            self.backend.fold_log()

    def claim_source(self, namespace: str, source: str, restored: set[str]) -> None:
        ownership.claim(self.backend, namespace, source)
        ownership.restored(self.backend, namespace, source, restored)
