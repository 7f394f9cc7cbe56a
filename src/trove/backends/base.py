"""The seam between the store and where it keeps things.

The store (id rules, chunking, embedding, fusion, memory rules) is written once above a
backend; a backend only stores rows and answers index queries. SQLite implements it now;
PostgreSQL implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

from trove.models import Chunk, Document, Edge

if TYPE_CHECKING:  # only in signatures: opening a store loads none of these for them
    import numpy as np

    from trove.hits import ChunkHit
    from trove.originals import OriginalInfo
    from trove.search.filters import Filters
    from trove.search.query import ParsedQuery


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
class EmbedderLock:
    """Which embedder made the vectors in a store, and where they are."""

    spec: str
    model_id: str
    dimension: int
    table: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileStat:
    """What an ingest saw of a file it stored: its size and times, and the hash of what it
    read. A file that still has this size and these times still has this hash."""

    size: int
    mtime_ns: int
    ctime_ns: int
    content_hash: str


@dataclass(frozen=True)
class FileState:
    """What an ingest recorded of one file it stored (one row of ``file_stat``).

    ``stat``: its size and times with the hash of what was read, None when the file was
    modified too recently to trust them. ``file_hash``: for a format whose text is
    derived (HTML, PDF, mail, records), the hash it was last fully stored from, keyed
    with the field mapping it was read with; None for Markdown and text, whose
    document's own content hash says as much."""

    stat: FileStat | None = None
    file_hash: str | None = None

    @classmethod
    def from_columns(cls, columns: Sequence[Any]) -> FileState:
        """From (size, mtime_ns, ctime_ns, content_hash, file_hash), as stored."""
        size, mtime_ns, ctime_ns, content_hash, file_hash = columns
        stat = None
        if size is not None:
            stat = FileStat(int(size), int(mtime_ns), int(ctime_ns), str(content_hash))
        return cls(stat, None if file_hash is None else str(file_hash))

    def columns(self) -> tuple[Any, ...]:
        """(size, mtime_ns, ctime_ns, content_hash, file_hash), as stored."""
        st = self.stat
        if st is None:
            return None, None, None, None, self.file_hash
        return st.size, st.mtime_ns, st.ctime_ns, st.content_hash, self.file_hash


class Backend(Protocol):
    """What a backend does. The store never issues SQL itself; everything goes here."""

    # lifecycle and settings
    def close(self) -> None: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str | None) -> None: ...

    # documents and chunks
    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None: ...
    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]: ...
    def document_texts(self, doc_ids: Sequence[str], chars: int) -> dict[str, str]: ...
    def put_document(self, doc: Document, *, text: bool = True) -> None: ...
    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]: ...
    def put_many(self, writes: Sequence[DocumentWrite]) -> tuple[list[int], list[int]]: ...
    def export_chunks(
        self, doc_ids: Sequence[str], table: str | None
    ) -> dict[str, list[tuple[ChunkRow, np.ndarray | None]]]: ...
    def iter_documents(self, *, after: str | None, limit: int) -> list[Document]: ...
    def set_deleted(self, doc_id: str, when: float | None) -> bool: ...
    def purge(self, now: float) -> list[str]: ...

    # originals (content-addressed; a blob goes with its last document)
    def put_original(
        self, doc_id: str, digest: str, size: int, source: IO[bytes], name: str, media_type: str
    ) -> None: ...
    def original_info(self, doc_id: str) -> OriginalInfo | None: ...
    def original_pieces(self, digest: str, piece: int = ...) -> Iterator[bytes]: ...
    def original_hashes(self) -> dict[str, int]: ...
    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]: ...
    def namespace_documents(self, namespace: str) -> list[str]: ...
    def record_access(self, counts: Mapping[str, tuple[int, float]]) -> None: ...
    def set_canonical(self, marks: Mapping[str, str | None]) -> None: ...
    def namespace_vectors(self, namespace: str, table: str) -> tuple[list[str], np.ndarray]: ...

    # clusters (trove.memory.clusters keeps the rules)
    def put_cluster(self, cluster_id: str, namespace: str, data: str) -> None: ...
    def get_cluster(self, cluster_id: str) -> tuple[str, str] | None: ...
    def list_clusters(self, namespace: str) -> list[tuple[str, str]]: ...
    def delete_cluster(self, cluster_id: str) -> bool: ...
    def add_members(self, cluster_id: str, doc_ids: Sequence[str], now: float) -> None: ...
    def remove_members(self, cluster_id: str | None, doc_ids: Sequence[str]) -> int: ...
    def cluster_members(self, cluster_id: str) -> list[str]: ...
    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]: ...
    def file_states(self, namespace: str, source: str) -> dict[str, FileState]: ...
    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None: ...
    def file_sources(self) -> list[tuple[str, str]]: ...
    def list_documents(
        self,
        namespace: str,
        *,
        scope: Sequence[str],
        session: str | None,
        after: tuple[float, str] | None,
        limit: int,
        include_deleted: bool,
        filters: Filters | None = None,
    ) -> list[Document]: ...
    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]: ...

    # keyword search and filtering
    def term_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each query word (a long query keeps its rarest words)."""
        ...

    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]: ...
    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]: ...
    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]: ...

    # edges
    def put_edge(self, src: str, dst: str, type: str, weight: float, now: float) -> None: ...
    def delete_edges(self, src: str, dst: str, type: str | None) -> int: ...
    def edges_of(self, doc_ids: Sequence[str], type: str | None) -> list[Edge]: ...

    # vectors, locked to one embedder
    def vector_lock(self) -> EmbedderLock | None: ...
    def lock_vectors(self, spec: str, model_id: str, dimension: int) -> EmbedderLock: ...
    def begin_rebuild(self, dimension: int) -> str: ...
    def finish_rebuild(self, lock: EmbedderLock) -> None: ...
    def put_vectors(self, table: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> None: ...
    def vectors_by_hash(self, table: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]: ...
    def chunks_without_vectors(
        self, table: str, *, batch: int = 256
    ) -> Iterator[list[tuple[int, str, str]]]: ...
    def vector_count(self, namespace: str | None = None, session: str | None = None) -> int: ...
    def vector_search(
        self, lock: EmbedderLock, query: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]: ...


@runtime_checkable
class LocalIndexes(Protocol):
    """A backend that keeps search indexes in this process's memory (SQLite: the vector
    index and the word index), which must hear of vector changes that do not go through
    its own writes. A backend whose indexes live in a server (PostgreSQL) is not one:
    check with ``isinstance(backend, LocalIndexes)``."""

    def warm(self) -> None:
        """Load the in-memory indexes now rather than at the first query that needs them."""
        ...

    def vectors_changed(
        self, dropped: Sequence[int], added: Sequence[int], vectors: np.ndarray
    ) -> None:
        """After a commit: chunks ``dropped`` are gone, ``added`` have these vectors."""
        ...

    def vectors_reset(self) -> None:
        """Forget the in-memory vector index (after a purge, a rebuild or a rollback)."""
        ...
