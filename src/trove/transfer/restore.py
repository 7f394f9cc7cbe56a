"""Restore documents as they were stored elsewhere: the one raw write path that
``trove import`` (:mod:`trove.transfer.jsonl`) and ``trove migrate``
(:mod:`trove.tools.copy`) share.

A document is written as it comes (every field, times included), with its chunks as
spans and, where they travel, its vectors: nothing is chunked or embedded again. A batch
is one transaction, so a restore stopped midway keeps whole batches, and running it again
skips what is already there (:func:`outcome`).

Vectors into a store without any fill a fresh vector table, and the store switches to it
at :meth:`Restore.finish` (PostgreSQL then builds its HNSW index once, far faster than row
by row). The table's name and dimension wait in ``meta`` under :data:`PENDING`
meanwhile, so an interrupted restore resumes into the same table. A store that has
vectors already takes only vectors of the same embedder.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trove.backends.base import Backend, EmbedderLock
from trove.backends.writes import ChunkRow
from trove.errors import EmbedderMismatch, InvalidInput
from trove.models import Document, same_copy
from trove.timeutil import to_epoch

PENDING = "restore.vectors"

# Outcomes of one document: the written ones and the ones left alone.
WRITTEN = ("added", "updated")


@dataclass(frozen=True)
class Item:
    """One document to restore: its chunk rows and, one per row where they travel, its
    vectors (as given: the restore's ``decode`` turns each into an array or None)."""

    doc: Document
    rows: Sequence[ChunkRow]
    vectors: Sequence[Any] = ()


def outcome(old: Document | None, doc: Document, *, keep_newer: bool) -> str:
    """What restoring ``doc`` over the stored ``old`` does: ``unchanged`` (the same copy),
    ``kept_newer`` (the stored one is newer, and ``keep_newer``), ``added`` or
    ``updated``."""
    if same_copy(old, doc):
        return "unchanged"
    if old is None:
        return "added"
    if keep_newer and (to_epoch(old.updated_at) or 0) > (to_epoch(doc.updated_at) or 0):
        return "kept_newer"
    return "updated"


def _as_array(vector: Any) -> np.ndarray | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32)


class Restore:
    """Raw writes into ``backend``; ``lock`` is the embedder of the vectors that come
    (None when none do), ``refusal(stored, incoming)`` the message when the store's
    vectors are another embedder's."""

    def __init__(
        self,
        backend: Backend,
        lock: EmbedderLock | None,
        refusal: Callable[[EmbedderLock, EmbedderLock], str],
        *,
        decode: Callable[[Any], np.ndarray | None] = _as_array,
    ) -> None:
        self.backend = backend
        self.lock = lock
        self.decode = decode
        self.table, self.fresh = self._table(refusal)
        self.chunks = 0
        self.vectors = 0

    def _table(
        self, refusal: Callable[[EmbedderLock, EmbedderLock], str]
    ) -> tuple[str | None, bool]:
        """The vector table to fill, and whether it is a fresh one to switch to at the end."""
        lock = self.lock
        if lock is None:
            return None, False
        stored = self.backend.vector_lock()
        if stored is None:
            return self._pending(lock.dimension), True
        if (stored.model_id, stored.dimension) != (lock.model_id, lock.dimension):
            raise EmbedderMismatch(refusal(stored, lock))
        return stored.table, False

    def _pending(self, dimension: int) -> str:
        """The fresh table; one an interrupted restore left in meta is resumed."""
        try:
            pending = json.loads(self.backend.get_meta(PENDING) or "null")
        except ValueError:
            pending = None
        if isinstance(pending, dict) and pending.get("dimension") == dimension:
            return str(pending["table"])
        table = self.backend.begin_rebuild(dimension)
        self.backend.set_meta(PENDING, json.dumps({"table": table, "dimension": dimension}))
        return table

    def changed(self, docs: Sequence[Document]) -> tuple[list[Document], dict[str, Document]]:
        """Of ``docs``, those not stored as they are; and what is stored of them."""
        present = self.backend.get_documents([doc.id for doc in docs])
        return [doc for doc in docs if not same_copy(present.get(doc.id), doc)], present

    def documents(
        self,
        items: Sequence[Item],
        *,
        keep_newer: bool = False,
        present: Mapping[str, Document] | None = None,
    ) -> Counter[str]:
        """Write a batch in one transaction; counts its :func:`outcome` s. ``present``:
        what is stored of them, when the caller has read it already."""
        if present is None:
            present = self.backend.get_documents([item.doc.id for item in items])
        counts: Counter[str] = Counter()
        with self.backend.transaction():
            for item in items:
                result = outcome(present.get(item.doc.id), item.doc, keep_newer=keep_newer)
                if result in WRITTEN:
                    self._write(item)
                counts[result] += 1
        return counts

    def _write(self, item: Item) -> None:
        doc = item.doc
        self.backend.put_document(doc)
        _, ids = self.backend.replace_chunks(doc.id, item.rows)
        self.chunks += len(ids)
        if self.table is None or self.lock is None or len(item.vectors) != len(ids):
            return
        vectors = [self.decode(v) for v in item.vectors]
        dimension = self.lock.dimension
        if any(v is not None and v.shape != (dimension,) for v in vectors):
            raise InvalidInput(f"document {doc.id}: a vector is not {dimension}-d")
        pairs = [(cid, v) for cid, v in zip(ids, vectors, strict=True) if v is not None]
        if pairs:
            matrix = np.stack([v for _, v in pairs]).astype(np.float32, copy=False)
            self.backend.put_vectors(self.table, [cid for cid, _ in pairs], matrix)
            self.vectors += len(pairs)

    def finish(self) -> None:
        """Switch the store to the fresh vector table, if this restore filled one."""
        if self.fresh and self.lock is not None and self.table is not None:
            lock = self.lock
            self.backend.finish_rebuild(
                EmbedderLock(lock.spec, lock.model_id, lock.dimension, self.table)
            )
            self.backend.set_meta(PENDING, None)
