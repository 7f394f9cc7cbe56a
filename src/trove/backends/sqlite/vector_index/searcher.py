"""Semantic retrieval: k-NN over chunk vectors, filtered inside the search.

The file is the source of truth; a :class:`VectorIndex` (quantized, with exact rescoring)
makes queries fast. Opening it must not make the first query wait:
- a cache of the index beside the file (cache.py) is mapped in
  milliseconds and shared by every process of the store;
- without one, sqlite-vec answers by an exact scan (exact.py) while the
  index loads in the background, from the process's second semantic query (a one-shot
  command never pays for a load it would not use), or at once on ``Store.warm()``; a
  load saves the cache for the processes that come next, and then maps it too.
The index is updated by this process's own writes, and caught up when another connection
commits (SQLite's ``data_version`` says so).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import apsw
import numpy as np

from trove.backends.ranking import WIDEN, ChunkFields, first_window
from trove.backends.sqlite.filters import (
    ChunkCheck,
    allowed_chunks,
    candidate_chunks,
    first_asked,
    visible_best,
)
from trove.backends.sqlite.stats import chunk_repeats
from trove.backends.sqlite.vector_index import cache as sqlite_index_cache
from trove.backends.sqlite.vector_index.exact import ExactScan
from trove.backends.sqlite.vector_index.index import VectorIndex
from trove.hits import ChunkHit
from trove.search import deadline
from trove.search.filters import Filters

if TYPE_CHECKING:
    from trove.backends.base import EmbedderLock
    from trove.backends.sqlite.parts import SQLiteParts


class _Checked:
    """Which of one search's ranked chunks pass its filters. A wider window ranks the
    narrower one's chunks again: each chunk is checked once (a fifth of SciFact's hybrid
    legs widened from 300 chunks to 1,200 and checked all 1,200)."""

    def __init__(self, backend: SQLiteParts, filters: Filters, now: float) -> None:
        self.backend = backend
        self.where = ChunkCheck(filters, now)
        self.now = now
        self.seen: set[int] = set()
        self.allowed: dict[int, tuple[str, ChunkFields]] = {}

    def ask_first(self, ranked: Sequence[np.ndarray], limits: Sequence[int]) -> None:
        """Ask the filter, in one statement, about the chunks that :meth:`collapse` of each
        ranking (``ranked``: chunk ids, best first) asks about first: several phrasings'
        rankings then cost one statement, not one each."""
        asked = {
            cid
            for ids, limit in zip(ranked, limits, strict=True)
            for cid in ids[: first_asked(limit)].tolist()
        }
        asked -= self.seen
        if asked:
            conn = self.backend.conn
            self.allowed.update(allowed_chunks(conn, sorted(asked), *self.where.clause(conn)))
            self.seen.update(asked)

    def collapse(self, ids: np.ndarray, scores: np.ndarray, limit: int) -> list[ChunkHit]:
        # tolist(): Python ints and floats of the same values, without a call per row.
        ranked = list(zip(ids.tolist(), scores.tolist(), strict=True))
        conn = self.backend.conn
        return visible_best(conn, ranked, self.where, limit, self.allowed, self.seen)


# Unfiltered windows up to this many chunks; past it, the filter is computed in SQL and
# the k-NN runs over exactly the allowed chunks.
_MAX_WINDOW = 4096


class _Searchable(Protocol):
    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


# What a search runs on: the index (loaded, or mapped from its cache), or the exact scan.
_Index = VectorIndex | sqlite_index_cache.LayeredIndex | ExactScan


def _search_many(
    index: _Index, queries: np.ndarray, ks: Sequence[int]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each query's ``ks[i]`` nearest chunks, in one pass of each layer of the index: a
    cached index is a mapped base and an overlay of later rows, merged per query as
    LayeredIndex.search merges them (kept here while cache.py is rewritten)."""
    if len(ks) == 1:  # a plain query: one search
        return [index.search(queries[0], ks[0])]
    if not isinstance(index, sqlite_index_cache.LayeredIndex):
        return index.search_many(queries, ks)
    found = index.base.search_many(queries, ks)
    if not len(index.overlay):
        return found
    more = index.overlay.search_many(queries, ks)
    merged = []
    for (ids, scores), (more_ids, more_scores), k in zip(found, more, ks, strict=True):
        ids, scores = np.concatenate([ids, more_ids]), np.concatenate([scores, more_scores])
        order = np.argsort(-scores, kind="stable")[:k]
        merged.append((ids[order], scores[order]))
    return merged


class SemanticSearcher:
    """Chunk vectors of one store, searchable by cosine similarity."""

    def __init__(self, backend: SQLiteParts, lock: EmbedderLock) -> None:
        self.backend = backend
        self.lock = lock
        self._index: VectorIndex | sqlite_index_cache.LayeredIndex | None = None
        self._version = -1
        self._guard = threading.RLock()
        self._loader: threading.Thread | None = None
        self._queries = 0
        self._cache_tried = False
        self._stop = threading.Event()

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
        """Load (or catch up) the index now, from its cache or else from the file."""
        self._current()

    def close(self, *, wait: bool = True) -> None:
        """A background load stops at its next batch (the store is closing, or this
        searcher is replaced); ``wait`` for it to end."""
        self._stop.set()
        loader = self._loader
        if wait and loader is not None and loader is not threading.current_thread():
            loader.join()

    @property
    def ready(self) -> bool:
        return self._index is not None

    def search(
        self, query: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by their best chunk's cosine similarity, filters applied in the k-NN."""
        return self.search_many(np.asarray(query).reshape(1, -1), filters, [limit], now)[0]

    def search_many(
        self, queries: np.ndarray, filters: Filters, limits: Sequence[int], now: float
    ) -> list[list[ChunkHit]]:
        """:meth:`search` of each of ``queries`` (``limits[i]`` documents of
        ``queries[i]``): the first window of every query in one pass of the index
        (VectorIndex.search_many), each chunk's filter asked once for all of them; a
        query whose window holds too few allowed documents widens on its own."""
        index = self._available()
        checked = _Checked(self.backend, filters, now)
        repeats = chunk_repeats(self.backend.conn)
        windows = [
            min(first_window(limit, repeats), _MAX_WINDOW) if limit > 0 else 0 for limit in limits
        ]
        found = _search_many(index, np.asarray(queries, np.float32), windows)
        if len(limits) > 1:
            checked.ask_first([ids for ids, _ in found], limits)
        results = []
        for query, limit, window, (ids, scores) in zip(
            queries, limits, windows, found, strict=True
        ):
            hits = checked.collapse(ids, scores, limit) if limit > 0 else []
            if limit > 0 and len(hits) < limit and len(ids) >= window:
                hits = self._widened(index, query, (limit, window), checked, filters)
            results.append(hits)
        return results

    def _widened(
        self,
        index: _Searchable,
        query: np.ndarray,
        windows: tuple[int, int],
        checked: _Checked,
        filters: Filters,
    ) -> list[ChunkHit]:
        """Too few of the first ``window`` chunks passed the filter: search wider."""
        limit, window = windows
        while window < _MAX_WINDOW:
            window = min(window * WIDEN, _MAX_WINDOW)
            ids, scores = index.search(query, window)
            hits = checked.collapse(ids, scores, limit)
            if len(hits) >= limit or len(ids) < window:
                return hits
        # The filter is selective: search only the chunks it allows.
        allowed = np.asarray(
            candidate_chunks(self.backend.conn, filters, checked.now), dtype=np.int64
        )
        window = max(limit * 8, 100)
        while True:
            ids, scores = index.search(query, window, candidates=allowed)
            hits = checked.collapse(ids, scores, limit)
            if len(hits) >= limit or len(ids) < window:
                return hits
            window *= 8

    def _available(self) -> _Index:
        """The index if it is loaded or cached; else the exact scan, and a background load
        from the second query on. Keeping the index in step is not the search's own work
        (deadline.outside)."""
        with deadline.outside(), self._guard:
            if self._index is not None or self._open_cache():
                return self._current()
            self._queries += 1
            if self._queries >= 2 and (self._loader is None or not self._loader.is_alive()):
                self._loader = threading.Thread(target=self._load_quietly, daemon=True)
                self._loader.start()
            return ExactScan(self.backend, self.lock.table)

    def _open_cache(self) -> bool:
        if self._cache_tried:  # once: a missing cache stays missing until a load saves one
            return False
        self._cache_tried = True
        version = self.backend.data_version()
        index = sqlite_index_cache.load(self.backend, self.lock)
        if index is None:
            return False
        self._index, self._version = index, version
        return True

    def _current(self) -> VectorIndex | sqlite_index_cache.LayeredIndex:
        with self._guard:
            if self._index is None and not self._open_cache():
                self._install(self._load())
            assert self._index is not None
            version = self.backend.data_version()
            if version != self._version:
                self._catch_up(self._index)
            self._version = version
            return self._index

    def _load_quietly(self) -> None:
        with contextlib.suppress(apsw.Error, _Stopped):  # the store is closing
            index = self._load()
            with self._guard:
                if self._index is not None:
                    return
                self._install(index, save=False)
            # Outside the guard: queries go on while the file is written.
            self._save(index)

    def _install(self, index: VectorIndex, *, save: bool = True) -> None:
        """Use a freshly loaded index (caught up with what committed while it loaded) and
        save it as the store's cache; the caller holds the guard."""
        self._catch_up(index)
        self._version = self.backend.data_version()
        self._index = index
        if save:
            self._save(index)

    def _save(self, index: VectorIndex) -> None:
        """Save ``index`` as the store's cache, then search the mapped cache instead: its
        pages are shared with every process serving the store, where the loaded index is
        this process's own (1.2 GB at 1M chunks)."""
        if not sqlite_index_cache.save(self.backend, self.lock, index):
            return
        with self._guard:
            if self._index is not index:  # replaced meanwhile (reset, another load)
                return
            version = self.backend.data_version()
            mapped = sqlite_index_cache.load(self.backend, self.lock)
            if mapped is not None:
                self._index, self._version = mapped, version

    def _load(self) -> VectorIndex:
        index = VectorIndex(self.lock.dimension)
        for ids, vectors in self.backend.iter_vectors(self.lock.table):
            if self._stop.is_set():
                raise _Stopped
            index.add(ids, vectors)
        return index

    def _catch_up(self, index: VectorIndex | sqlite_index_cache.LayeredIndex) -> None:
        """Another connection committed: add its new vectors, drop its removed chunks."""
        live = self.backend.live_chunk_ids()
        known = index.ids()
        index.remove(np.setdiff1d(known, live, assume_unique=True))
        newest = int(known.max()) if len(known) else 0
        for ids, vectors in self.backend.iter_vectors(self.lock.table, after=newest):
            index.add(ids, vectors)


class _Stopped(Exception):
    """The store is closing: a background load gives up."""
