"""Semantic retrieval: k-NN over chunk vectors, filtered inside the search.

The file is the source of truth; an in-memory :class:`VectorIndex` (quantized, with exact
rescoring) makes queries fast. It is loaded on the first semantic query, updated by this
process's own writes, and caught up when another connection commits (SQLite's
``data_version`` says so).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..backends.base import KeywordHit
from .filters import Filters
from .ranking import WIDEN, collapse, first_window
from .vectors import VectorIndex

if TYPE_CHECKING:
    from ..backends.base import EmbedderLock
    from ..backends.sqlite import SQLiteBackend

# Unfiltered windows up to this many chunks; past it, the filter is computed in SQL and
# the k-NN runs over exactly the allowed chunks.
_MAX_WINDOW = 4096


class SemanticSearcher:
    """Chunk vectors of one store, searchable by cosine similarity."""

    def __init__(self, backend: SQLiteBackend, lock: EmbedderLock) -> None:
        self.backend = backend
        self.lock = lock
        self._index: VectorIndex | None = None
        self._version = -1
        self._guard = threading.RLock()

    def added(self, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """This process wrote vectors (after commit)."""
        with self._guard:
            if self._index is not None and len(chunk_ids):
                self._index.add(np.asarray(chunk_ids, dtype=np.int64), vectors)

    def removed(self, chunk_ids: Sequence[int]) -> None:
        with self._guard:
            if self._index is not None and len(chunk_ids):
                self._index.remove(np.asarray(chunk_ids, dtype=np.int64))

    def reset(self) -> None:
        """Forget the in-memory index; the next search reloads it from the file."""
        with self._guard:
            self._index = None

    def warm(self) -> None:
        """Load (or catch up) the in-memory index now."""
        self._current()

    def search(
        self, query: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[KeywordHit]:
        """Documents by their best chunk's cosine similarity, filters applied in the k-NN."""
        index = self._current()
        if limit <= 0 or len(index) == 0:
            return []
        window = min(first_window(limit), _MAX_WINDOW)
        while True:
            ids, scores = index.search(query, window)
            hits = self._collapse(ids, scores, filters, limit, now)
            if len(hits) >= limit or len(ids) < window:
                return hits
            if window >= _MAX_WINDOW:
                break
            window = min(window * WIDEN, _MAX_WINDOW)
        # The filter is selective: search only the chunks it allows.
        allowed = np.asarray(self.backend.candidate_chunks(filters, now), dtype=np.int64)
        window = max(limit * 8, 100)
        while True:
            ids, scores = index.search(query, window, candidates=allowed)
            hits = self._collapse(ids, scores, filters, limit, now)
            if len(hits) >= limit or len(ids) < window:
                return hits
            window *= 8

    def _collapse(
        self, ids: np.ndarray, scores: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[KeywordHit]:
        ranked = [(int(i), float(s)) for i, s in zip(ids, scores, strict=True)]
        allowed = self.backend.filter_chunks([i for i, _ in ranked], filters, now)
        return collapse(ranked, allowed, limit)

    def _current(self) -> VectorIndex:
        with self._guard:
            version = self.backend.data_version()
            if self._index is None:
                self._index = self._load()
            elif version != self._version:
                self._catch_up(self._index)
            self._version = version
            return self._index

    def _load(self) -> VectorIndex:
        index = VectorIndex(self.lock.dimension)
        for ids, vectors in self.backend.iter_vectors(self.lock.table):
            index.add(ids, vectors)
        return index

    def _catch_up(self, index: VectorIndex) -> None:
        """Another connection committed: add its new vectors, drop its removed chunks."""
        live = self.backend.live_chunk_ids()
        known = index.ids()
        index.remove(np.setdiff1d(known, live, assume_unique=True))
        newest = int(known.max()) if len(known) else 0
        for ids, vectors in self.backend.iter_vectors(self.lock.table, after=newest):
            index.add(ids, vectors)
