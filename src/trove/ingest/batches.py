"""The documents of an ingest run on their way to the store: a batch per transaction
(and per call to the embedder), with the file records that go once it is stored."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trove.backends.file_state import FileStat
from trove.errors import (
    EmbedderError,
    EmbedderMismatch,
    MissingDependency,
    StoreError,
    TroveError,
)
from trove.ingest.known import Known
from trove.ingest.report import IngestReport
from trove.ingest.target import Target, Written
from trove.models import Document

# A batch is one transaction (and one call to the embedder).
BATCH_DOCUMENTS = 512
BATCH_BYTES = 16 * 1024 * 1024
# Errors about the store or the embedder, not about a file: the run stops.
_FATAL = (EmbedderMismatch, EmbedderError, StoreError, MissingDependency)


@dataclass
class Item:
    """One document on its way to the store."""

    rel: str
    source_id: str
    fields: dict[str, Any]
    doc_id: str | None
    moved: bool
    size: int
    # The file to keep as the document's original (keep_originals; whole-file documents).
    original: Path | None = None
    # Or its bytes (a message of an mbox, an attachment): data, name, media type.
    original_bytes: tuple[bytes, str, str] | None = None


@dataclass
class _Batch:
    items: list[Item] = field(default_factory=list)
    size: int = 0
    # File hashes to record once this batch is stored (derived formats).
    hashes: dict[str, str] = field(default_factory=dict)
    # File stats to record (or forget) once this batch is stored.
    stats: dict[str, FileStat | None] = field(default_factory=dict)


class Batches:
    """Writes a run's documents a batch at a time, and counts what each write did."""

    def __init__(
        self,
        store: Target,
        known: Known,
        report: IngestReport,
        *,
        dry_run: bool,
        progress: Callable[[str], None],
    ) -> None:
        self.store = store
        self.known = known
        self.report = report
        self.dry_run = dry_run
        self.progress = progress
        self.batch = _Batch()
        self.failed_files: set[str] = set()
        self.ids_in_use = {d.doc_id: sid for sid, d in known.docs.items()}
        self.written: set[str] = set()  # doc ids written in this run
        self.links: dict[str, tuple[str, ...]] = {}  # source_id -> links, of notes read
        self.documents = 0

    def add(self, item: Item) -> None:
        self.batch.items.append(item)
        self.batch.size += item.size
        if len(self.batch.items) >= BATCH_DOCUMENTS or self.batch.size >= BATCH_BYTES:
            self.flush()

    def file_hash(self, rel: str, digest: str) -> None:
        self.batch.hashes[rel] = digest

    def file_stat(self, rel: str, stat: FileStat | None) -> None:
        self.batch.stats[rel] = stat
        if stat is not None and len(self.batch.stats) >= BATCH_DOCUMENTS:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, _Batch()
        if self.dry_run:
            for item in batch.items:
                self._count(item, self._would(item), 0)
                if item.original is not None or item.original_bytes is not None:
                    self.report.originals += 1
            return
        for item, result in self._write(self._prepare(batch.items)):
            self.ids_in_use[result.id] = item.source_id
            self.written.add(result.id)
            self._count(item, result.action, result.chunks)
            if item.original is not None or item.original_bytes is not None:
                self._keep_original(item, result.id)
        failed = self.failed_files
        self.known.record(
            {rel: h for rel, h in batch.hashes.items() if rel not in failed},
            {rel: st for rel, st in batch.stats.items() if rel not in failed},
        )
        self.progress("")

    def _prepare(self, items: list[Item]) -> list[tuple[Item, Document]]:
        prepared = []
        for item in items:
            try:
                doc = self.store.prepare(item.fields, item.doc_id)
            except TroveError as exc:
                self._item_failed(item, str(exc))
                continue
            prepared.append((item, doc))
        return prepared

    def _write(self, prepared: list[tuple[Item, Document]]) -> list[tuple[Item, Written]]:
        if not prepared:
            return []
        try:
            results = self.store.write_prepared([doc for _, doc in prepared])
        except _FATAL:
            raise
        except TroveError as exc:
            for item, _ in prepared:
                self._item_failed(item, str(exc))
            return []
        return [(item, result) for (item, _), result in zip(prepared, results, strict=True)]

    def _keep_original(self, item: Item, doc_id: str) -> None:
        """Store the file's bytes beside its document; a failure (too large, unreadable)
        is reported against the file, and the document stays stored."""
        try:
            if item.original is not None:
                self.store.attach_original(doc_id, item.original, item.original.name, "")
            elif item.original_bytes is not None:
                self.store.attach_original(doc_id, *item.original_bytes)
        except TroveError as exc:
            self.report.failed.append((item.rel, f"original not kept: {exc}"))
            return
        self.report.originals += 1

    def _would(self, item: Item) -> str:
        old = self.known.docs.get(item.source_id)
        if old is None:
            return "added"
        text_hash = hashlib.sha256(item.fields["text"].encode("utf-8", "replace")).hexdigest()
        return "unchanged" if text_hash == old.content_hash and not old.deleted else "updated"

    def _count(self, item: Item, action: str, chunks: int) -> None:
        self.documents += 1
        self.report.chunks += chunks
        if item.moved:
            return  # counted once per file, as moved
        if action == "added":
            self.report.added += 1
        elif action == "unchanged":
            self.report.unchanged += 1
        else:
            self.report.updated += 1

    def _item_failed(self, item: Item, reason: str) -> None:
        self.report.failed.append((item.source_id, reason))
        self.failed_files.add(item.rel)
        self.links.pop(item.source_id, None)
