"""What ingest needs of the store it fills: a small protocol, so that ingest depends on
it and not on the store's modules.

Ingest writes documents and edges through it, records what it saw of each file, and
reads what the store holds of one (namespace, source).
:class:`trove.store_ingest.StoreTarget` implements it from a store's parts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from trove.backends.file_state import FileState
from trove.models import Document


class Written(Protocol):
    """What one write did (``trove.write.WriteResult``)."""

    @property
    def id(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def chunks(self) -> int: ...


class Target(Protocol):
    """The store, as ingest sees it."""

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        """(source_id, doc id, content hash, deleted) for every document of one source."""
        ...

    def delete(self, doc_id: str) -> bool: ...

    def link(self, src: str, dst: str, type: str = ..., weight: float = ...) -> Any: ...

    def unlink(self, src: str, dst: str, type: str | None = None) -> int: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def prepare(self, fields: Mapping[str, Any], doc_id: str | None) -> Document:
        """Validate one document to write (``TroveError`` if it is not valid)."""
        ...

    def write_prepared(self, docs: Sequence[Document]) -> Sequence[Written]:
        """Write prepared documents, one transaction."""
        ...

    def documents(self, doc_ids: Sequence[str]) -> Mapping[str, Document]:
        """The stored documents with these ids (deleted ones too), without touching them."""
        ...

    def edges_from(self, doc_id: str, type: str) -> list[str]:
        """The other ends of the edges of ``type`` from ``doc_id``, whatever their state."""
        ...

    def attach_original(
        self, doc_id: str, original: bytes | os.PathLike[str] | str, name: str, media_type: str
    ) -> None:
        """Keep ``original`` as ``doc_id``'s original (see :mod:`trove.originals`)."""
        ...

    def with_originals(self, doc_ids: Sequence[str]) -> set[str]:
        """Which of these documents have an original kept."""
        ...

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        """What ingest recorded of each file of one source."""
        ...

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        """Record (or, for None, forget) what ingest saw of files, one transaction."""
        ...

    def edited_files(self, namespace: str, source: str) -> set[str]:
        """Files of the source whose documents were edited in the store since last read."""
        ...

    def fold_log(self) -> None:
        """The run's writes are done: take the store's write-ahead log into its file."""
        ...

    def claim_source(self, namespace: str, source: str, restored: set[str]) -> None:
        """Ingest owns this source now; these edited files were read again."""
        ...
