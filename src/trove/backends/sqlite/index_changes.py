"""What the open transaction changes of the in-memory indexes, told to them on commit.

The SQLite backend keeps two search indexes in this process's memory: the word index
(:mod:`.word_searcher`) and the vector index (:mod:`.semantic`). Another process's
commits they notice themselves (SQLite's ``data_version``); this process's own writes are
told to them here, and only here. Every write records what it changes as it runs, in the
backend's transaction: the chunks it drops and adds (``replace_chunks``, ``put_many``,
``purge``, ``remove_documents``), the vectors it stores (``put_vectors``), a switch of
vector table (``finish_rebuild``). When the outermost transaction commits, the backend
applies the record; when it rolls back, the record is dropped. So no index ever holds a
chunk that was rolled back, whose id SQLite may hand out again, and no caller above the
backend tells an index anything.

Both are told in commit order. The word index is told under the connection's lock (it
only queues what it hears). The vector index takes its own lock and then reads the file
(a load catching up), so it must not be told under the connection's lock: commits queue
their records under it (:class:`CommitQueue`), and after it is released the queue is
applied, in order, by one thread at a time.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np


class WordIndex(Protocol):
    def committed(self, dropped: Sequence[int], added: Sequence[int]) -> None: ...


class _Locked(Protocol):
    @property
    def table(self) -> str: ...


class VectorIndex(Protocol):
    @property
    def lock(self) -> _Locked: ...
    def removed(self, chunk_ids: Sequence[int]) -> None: ...
    def added(self, chunk_ids: Sequence[int], vectors: np.ndarray) -> None: ...


# One step of the vector index's record: chunks dropped (table None), or vectors stored
# in a table.
_Step = tuple[str | None, Sequence[int], "np.ndarray | None"]


class IndexChanges:
    """The record of one transaction (a fresh one for each)."""

    def __init__(self) -> None:
        # For the word index: every chunk dropped and added, told as one batch.
        self.dropped: list[int] = []
        self.added: list[int] = []
        # For the vector index, in order: a chunk dropped after its vector was stored in
        # the same transaction must end up dropped.
        self._steps: list[_Step] = []
        self.reload = False  # the vector table was switched: forget the index

    def chunks(self, dropped: Iterable[int] = (), added: Iterable[int] = ()) -> None:
        """Chunks were deleted (their vectors go with them) and inserted."""
        gone = [int(i) for i in dropped]
        self.dropped.extend(gone)
        self.added.extend(int(i) for i in added)
        if gone:
            self._steps.append((None, gone, None))

    def vectors(self, table: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Vectors were stored in ``table`` (told to the index only if it is that table's)."""
        if len(chunk_ids):
            self._steps.append((table, [int(i) for i in chunk_ids], vectors))

    def switched(self) -> None:
        """The store uses another vector table now: the index is reloaded when needed."""
        self.reload = True

    def tell_words(self, words: WordIndex | None) -> None:
        """After the commit, under the connection's lock: tell the word index, if one was
        made (one made later reads the file)."""
        if words is not None and (self.dropped or self.added):
            words.committed(self.dropped, self.added)

    @property
    def for_vectors(self) -> bool:
        return bool(self._steps) or self.reload

    def tell_vectors(self, vectors: VectorIndex | None, forget: Callable[[], None]) -> None:
        """Tell the vector index, if there is one; ``forget`` drops it when the table was
        switched."""
        if self.reload:
            forget()
            return
        if vectors is None:
            return
        for table, ids, matrix in self._steps:
            if table is None:
                vectors.removed(ids)
            elif table == vectors.lock.table and matrix is not None:
                vectors.added(ids, matrix)


class CommitQueue:
    """Commits' records for the vector index, in commit order (see the module doc)."""

    def __init__(self) -> None:
        self._queue: deque[IndexChanges] = deque()
        self._applying = threading.Lock()

    def put(self, changes: IndexChanges) -> None:
        """Under the connection's lock, as the transaction commits."""
        if changes.for_vectors:
            self._queue.append(changes)

    def apply(self, vectors: Callable[[], VectorIndex | None], forget: Callable[[], None]) -> None:
        """Outside the connection's lock: tell the index every queued record. A thread
        finding another at it leaves its record to that one, which drains the queue."""
        while self._queue:
            if not self._applying.acquire(blocking=False):
                return
            try:
                while self._queue:
                    self._queue.popleft().tell_vectors(vectors(), forget)
            finally:
                self._applying.release()
