"""The in-memory word index of one SQLite store (backends/sqlite/word_index/fts.py), kept in
step with the file.

The file stays the source of truth. :class:`WordSearcher` builds the index from the
chunk table in a background thread, from a process's second keyword query on a store of
``AUTO_MIN_CHUNKS`` or more (a one-shot command never pays for it; until it is ready,
FTS5 answers, with the same scores in the same order), or at once on ``Store.warm()``.
It applies this process's committed changes, and catches up when another connection
commits (SQLite's ``data_version`` says so). Chunk rows are never edited in place (a
changed document gets new chunk ids), so "ids gone" and "ids above the newest known" are
all there is to catch up on.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw

from trove.backends.sqlite.schema import word_tokenizer
from trove.backends.sqlite.word_index.fts import SEGMENT_ROWS, Ranker, WordIndex
from trove.search import deadline

if TYPE_CHECKING:
    import numpy as np

    from trove.backends.sqlite.parts import SQLiteParts
    from trove.backends.sqlite.word_index import cache as word_cache
    from trove.backends.sqlite.word_index import maxscore as word_topk
else:  # numpy, and the cache file code, load when the index is first built
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    word_cache = LazyModule("trove.backends.sqlite.word_index.cache")
    word_topk = LazyModule("trove.backends.sqlite.word_index.maxscore")

# Stores below this many chunks are answered by FTS5 alone unless the index is asked for
# (Store.warm): there FTS5 takes well under a millisecond. Above it, FTS5's OR query costs
# milliseconds already (SciFact's 8,719 chunks: about half of a 5.9 ms keyword search) and
# the background build a fraction of a second; the answers are the same to the bit.
AUTO_MIN_CHUNKS = 1_000
_READ_ROWS = 1_000


class WordSearcher:
    """The in-memory word index of one SQLite store, kept in step with the file."""

    def __init__(self, backend: SQLiteParts) -> None:
        self.backend = backend
        self._index: WordIndex | None = None
        self._version = -1
        self._guard = threading.RLock()  # the index: built, caught up, searched
        # Commits are recorded under the connection's lock, in commit order; never under
        # _guard, which a search holds while it reads the file (no lock-order inversion).
        self._pending_lock = threading.Lock()
        self._pending_add: list[int] = []
        self._pending_drop: list[int] = []
        self._builder: threading.Thread | None = None
        self._queries = 0
        self._stop = threading.Event()
        # A private connection for the tokenizer: the store's connection stays free for
        # queries while a build tokenizes in another thread.
        self._tokens_conn = apsw.Connection(":memory:")
        self._tokenizer = word_tokenizer(self._tokens_conn)
        self._tokens_lock = threading.Lock()

    @property
    def ready(self) -> bool:
        return self._index is not None

    def ranker(self, terms: Sequence[str]) -> Ranker | None:
        """A ranking from the in-memory index, or None: FTS5 answers (not built yet). Its
        catching up with other processes' commits is not the search's own work."""
        with deadline.outside(), self._guard:
            index = self._index
            if index is None:
                self._maybe_start()
                return None
            self._catch_up(index)
            if index.dead_share > 0.5:  # mostly replaced rows: rebuild, once
                index = self._build()
            if len(index) < word_topk.MIN_ROWS:
                return index.ranker(terms)
            rank = word_topk.ranker(index, terms)
        if rank is None:
            return None
        guard = self._guard

        def ranked(window: int) -> list[tuple[int, float]]:
            with guard:  # the index holds still while the ranking reads it
                return rank(window)

        return ranked

    def warm(self) -> None:
        """Build the index now, in this thread (a server at startup, a benchmark)."""
        with self._guard, contextlib.suppress(_Stopped):  # closed meanwhile: nothing to do
            if self._index is None:
                self._build()
            else:
                self._catch_up(self._index)

    def committed(self, dropped: Sequence[int], added: Sequence[int]) -> None:
        """This process committed these chunk changes (applied at the next search)."""
        with self._pending_lock:
            self._pending_drop.extend(dropped)
            self._pending_add.extend(added)

    def close(self) -> None:
        self._stop.set()
        builder = self._builder
        if builder is not None and builder is not threading.current_thread():
            builder.join()
        self._tokens_conn.close()

    def _tokenize(self, data: bytes) -> list[str]:
        if self._stop.is_set():
            raise _Stopped
        if threading.current_thread() is self._builder:
            # Hand the GIL over at every chunk: a query reading rows takes it back once a
            # row, and would otherwise wait out Python's 5 ms switch interval each time
            # (queries during a build several times slower).
            time.sleep(0)
        with self._tokens_lock:
            tokens: Any = self._tokenizer(
                data,
                apsw.FTS5_TOKENIZE_DOCUMENT,
                None,
                include_offsets=False,
                include_colocated=False,
            )
        return tokens

    def _maybe_start(self) -> None:
        # Not for a process's first query: a one-shot command would pay for a build it
        # never uses (its query slowed by the build's share of the GIL and connection).
        self._queries += 1
        if self._queries < 2 or (self._builder is not None and self._builder.is_alive()):
            return
        if self.backend.newest_chunk_id() < AUTO_MIN_CHUNKS:
            return
        self._builder = threading.Thread(target=self._build_quietly, daemon=True)
        self._builder.start()

    def _build_quietly(self) -> None:
        with contextlib.suppress(apsw.Error, _Stopped):  # the store closed underneath
            self._build()

    def _build(self) -> WordIndex:
        """Map the index's cache, or else read and index every chunk (and save the
        cache); then catch up and install the index."""
        index = word_cache.load(self.backend, self._tokenize)
        fresh = index is None
        if index is None:
            index = WordIndex(self._tokenize)
        self._sync(index)
        with self._guard:
            self._sync(index)  # what was committed while the bulk was read
            self._index = index
            # Under the guard: a query's catch-up must not change it meanwhile. Then the
            # mapped cache replaces the built index: its pages are shared with every
            # process serving the store (330 MB of postings at 1M chunks).
            if fresh and word_cache.save(self.backend, index):
                self._index = word_cache.load(self.backend, self._tokenize) or index
            return self._index

    def _catch_up(self, index: WordIndex) -> None:
        if self.backend.data_version() != self._version:  # another connection committed
            self._sync(index)
            return
        with self._pending_lock:
            dropped, self._pending_drop = self._pending_drop, []
            added, self._pending_add = self._pending_add, []
        index.remove(dropped)
        newest = index.newest()  # commits come in id order; a sync may have read some
        fresh = [cid for cid in added if cid > newest]
        if fresh:
            index.add(self.backend.chunk_texts(fresh))

    def _sync(self, index: WordIndex) -> None:
        """Make ``index`` hold exactly the chunks in the file."""
        with self._pending_lock:  # the file shows every commit recorded so far
            self._pending_drop.clear()
            self._pending_add.clear()
        self._version = self.backend.data_version()
        if len(index):
            live = self.backend.live_chunk_ids()
            index.remove(np.setdiff1d(index.ids(), live, assume_unique=True).tolist())
        newest = index.newest()
        chunks: list[tuple[int, str]] = []
        # Short reads: each holds the store's connection, which queries wait for.
        while batch := self.backend.chunk_texts_after(newest, _READ_ROWS):
            if self._stop.is_set():
                raise _Stopped
            chunks += batch
            newest = batch[-1][0]
            if len(chunks) >= SEGMENT_ROWS:
                index.add(chunks)
                chunks = []
        index.add(chunks)


class _Stopped(Exception):
    """The store is closing: a background build gives up."""
