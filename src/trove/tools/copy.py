"""Copy a store to another place or backend (SQLite <-> PostgreSQL).

Streaming: documents are read a page at a time by id and written a batch per transaction,
so memory stays bounded by one batch. Resumable: a document already in the destination
with the same content and times is skipped, and each batch is atomic, so running the same
copy again after an interruption picks up where it stopped. Vectors travel with their
chunks (looked up by the chunk's text hash), so nothing is embedded again; the
destination's embedder lock must be absent or the same as the source's. What ingest
recorded of each file (its stat and hash, which sources it owns, which files were edited
in the store) travels too, so ingesting the same folder into the copy reads no
unchanged file again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trove.backends.base import Backend, EmbedderLock, LocalIndexes
from trove.errors import EmbedderMismatch, InvalidInput, NotFound
from trove.ingest import ownership
from trove.models import Document, same_copy
from trove.opening import is_postgres, redact
from trove.originals import copy_original
from trove.timeutil import now, to_epoch

# A copy into a store without vectors fills a fresh vector table and switches to it at the
# end (PostgreSQL then builds its HNSW index once, far faster than row by row); the
# table's name is kept here meanwhile, so an interrupted copy resumes into it.
_PENDING = "migrate.vectors"


@dataclass
class MigrateReport:
    """What one copy did."""

    copied: int = 0
    unchanged: int = 0
    chunks: int = 0
    vectors: int = 0
    edges: int = 0
    originals: int = 0
    files: int = 0  # file records of ingested folders
    embedder: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def migrate(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    batch_size: int = 200,
    progress: Callable[[int], None] | None = None,
) -> MigrateReport:
    """Copy every document (deleted and expired ones too), chunk, vector and edge of the
    store at ``src`` into the store at ``dst`` (created if new)."""
    from trove.opening import open_store

    source, target = os.fspath(src), os.fspath(dst)
    if source == target:
        raise InvalidInput("source and destination are the same store")
    if not is_postgres(source) and source != ":memory:" and not Path(source).exists():
        raise NotFound(f"{redact(source)} does not exist")
    if batch_size < 1:
        raise InvalidInput("batch_size must be at least 1")
    with open_store(source, embedder=None) as a, open_store(target, embedder=None) as b:
        return copy_backend(a.backend, b.backend, batch_size=batch_size, progress=progress)


def total_documents(src: str | os.PathLike[str]) -> int:
    """How many documents a copy of ``src`` will read (for a progress bar)."""
    from trove.opening import open_store

    with open_store(src, embedder=None) as store:
        stats = store.backend.stats(now())
    return int(stats["documents"] + stats["deleted"] + stats["expired"])


def copy_backend(
    src: Backend,
    dst: Backend,
    *,
    batch_size: int = 200,
    progress: Callable[[int], None] | None = None,
) -> MigrateReport:
    """The copy itself, between two open backends."""
    report = MigrateReport()
    lock = src.vector_lock()
    table, fresh = _destination_table(lock, dst)
    report.embedder = None if lock is None else lock.to_dict()
    copied_ids: list[str] = []
    sources: set[tuple[str, str]] = set()  # of documents that may come from a file
    after: str | None = None
    while docs := src.iter_documents(after=after, limit=batch_size):
        after = docs[-1].id
        _copy_batch(src, dst, docs, lock, table, report)
        copied_ids.extend(doc.id for doc in docs)
        sources.update((doc.namespace, doc.source) for doc in docs if doc.source_id)
        if progress:
            progress(len(docs))
    # Edges last: both of their ends exist in the destination by now.
    for start in range(0, len(copied_ids), batch_size):
        part = copied_ids[start : start + batch_size]
        mine = set(part)
        for edge in src.edges_of(part, None):
            if edge.src in mine:
                stamp = to_epoch(edge.created_at) or now()
                dst.put_edge(edge.src, edge.dst, edge.type, edge.weight, stamp)
                report.edges += 1
        for doc_id in part:  # originals, streamed blob by blob
            report.originals += copy_original(src, dst, doc_id)
    report.files = copy_file_state(src, dst, sources)
    if lock is not None and table is not None and fresh:
        dst.finish_rebuild(EmbedderLock(lock.spec, lock.model_id, lock.dimension, table))
        dst.set_meta(_PENDING, None)
    if isinstance(dst, LocalIndexes):
        dst.vectors_reset()
    return report


def copy_file_state(src: Backend, dst: Backend, sources: set[tuple[str, str]]) -> int:
    """Copy what ingest recorded: file records, one transaction per source, and which
    sources ingest owns and which of their files were edited; returns how many files."""
    files = 0
    for namespace, source in src.file_sources():
        states = src.file_states(namespace, source)
        dst.set_file_states(namespace, source, states)
        files += len(states)
    for namespace, source in sorted(sources):
        if ownership.claimed(src, namespace, source):
            ownership.claim(dst, namespace, source)
        edited = ownership.edited_files(src, namespace, source)
        if edited:
            ownership.set_edited(dst, namespace, source, edited)
    return files


def _destination_table(lock: EmbedderLock | None, dst: Backend) -> tuple[str | None, bool]:
    """The vector table to fill, and whether it is a fresh one to switch to at the end."""
    if lock is None:
        return None, False
    existing = dst.vector_lock()
    if existing is None:
        pending = dst.get_meta(_PENDING)
        if pending is None:
            pending = dst.begin_rebuild(lock.dimension)
            dst.set_meta(_PENDING, pending)
        return pending, True
    if (existing.model_id, existing.dimension) != (lock.model_id, lock.dimension):
        raise EmbedderMismatch(
            f"the destination's vectors were made by {existing.model_id} "
            f"({existing.dimension}-d), the source's by {lock.model_id} ({lock.dimension}-d); "
            "copy into a new store, or reembed one of them first"
        )
    return existing.table, False


def _copy_batch(
    src: Backend,
    dst: Backend,
    docs: Sequence[Document],
    lock: EmbedderLock | None,
    table: str | None,
    report: MigrateReport,
) -> None:
    present = dst.get_documents([doc.id for doc in docs])
    todo = [doc for doc in docs if not same_copy(present.get(doc.id), doc)]
    report.unchanged += len(docs) - len(todo)
    if not todo:
        return
    chunks = src.export_chunks([doc.id for doc in todo], None if lock is None else lock.table)
    with dst.transaction():
        for doc in todo:
            rows = chunks.get(doc.id, [])
            dst.put_document(doc)
            _, ids = dst.replace_chunks(doc.id, [row for row, _ in rows])
            report.chunks += len(rows)
            if table is None:
                continue
            pairs = [
                (cid, vector)
                for cid, (_, vector) in zip(ids, rows, strict=True)
                if vector is not None
            ]
            if pairs:
                matrix = np.stack([v for _, v in pairs]).astype(np.float32, copy=False)
                dst.put_vectors(table, [cid for cid, _ in pairs], matrix)
                report.vectors += len(pairs)
    report.copied += len(todo)
