"""The SQLite backend: one file (or ``:memory:``), through apsw, with FTS5 and sqlite-vec.

The class is the parts mixed together, one module each (the PostgreSQL backend's modules
have the same names): documents, files, filters, search, snippets, edges, stats,
lifecycle, clusters, originals, vectors; it opens the file and runs transactions.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import apsw

from trove.backends.listing import Listing
from trove.backends.sqlite.clusters import ClusterStorage
from trove.backends.sqlite.connection import (
    CHECKPOINT_PAGES,
    READ_CACHE_KB,
    UNWRITABLE,
    WRITE_CACHE_KB,
    checkpoint_every,
    fold_log,
    open_connection,
    set_cache,
)
from trove.backends.sqlite.documents import DocumentStorage
from trove.backends.sqlite.edges import EdgeStorage
from trove.backends.sqlite.files import FileStorage
from trove.backends.sqlite.filters import DIALECT, FilterQueries
from trove.backends.sqlite.index_changes import CommitQueue, IndexChanges
from trove.backends.sqlite.lifecycle import LifecycleStorage
from trove.backends.sqlite.originals import OriginalStorage
from trove.backends.sqlite.readers import Readers
from trove.backends.sqlite.schema import (
    LATEST_VERSION,
    check_is_trove,
    migrate,
    word_tokenizer,
)
from trove.backends.sqlite.search import KeywordSearch
from trove.backends.sqlite.snippets import Snippets
from trove.backends.sqlite.stats import Statistics
from trove.backends.sqlite.vectors import VectorStorage, load_extension
from trove.errors import StoreError

if TYPE_CHECKING:
    from trove.backends.sqlite.enrich import Enrichments
    from trove.backends.sqlite.events import EventLog
    from trove.backends.sqlite.word_index import searcher as word_searcher
else:  # with the word index's cache and numpy: loaded at the first keyword search or write
    from trove.lazy import LazyModule

    word_searcher = LazyModule("trove.backends.sqlite.word_index.searcher")


class SQLiteBackend(
    VectorStorage,
    DocumentStorage,
    FileStorage,
    FilterQueries,
    KeywordSearch,
    Snippets,
    EdgeStorage,
    Listing,
    Statistics,
    LifecycleStorage,
    ClusterStorage,
    OriginalStorage,
):
    """Everything trove stores, in one SQLite file. Thread-safe: one statement at a time."""

    dialect = DIALECT

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 5000) -> None:
        self.path = str(path)
        self.memory = self.path == ":memory:"
        self.conn, version = open_connection(self.path, busy_timeout_ms, check_is_trove)
        self._busy_timeout_ms = busy_timeout_ms
        self._depth = 0
        load_extension(self.conn.raw)
        if self.conn.read_only and version < LATEST_VERSION:
            raise StoreError(
                f"{self.path} needs its schema upgraded (version {version} to "
                f"{LATEST_VERSION}) but cannot be written; open it once with write access"
            )
        migrate(self.conn.raw, version)
        self._word_tokenizer = word_tokenizer(self.conn.raw)
        self._index_changes = IndexChanges()
        self._commits = CommitQueue()
        # Not for a read-only file: its one connection reads it as immutable (no -shm).
        read_alone = self.memory or self.conn.read_only
        self._readers = None if read_alone else Readers(self.path, busy_timeout_ms)

    @property
    def _words(self) -> word_searcher.WordSearcher:
        """The in-memory word index, made at first use (opening and counting never do)."""
        words = self.__dict__.get("_word_searcher")
        if words is None:
            with self.conn.lock:  # one per backend, whichever thread comes first
                words = self.__dict__.get("_word_searcher")
                if words is None:
                    words = self._words = word_searcher.WordSearcher(self)
        return words

    @_words.setter
    def _words(self, words: word_searcher.WordSearcher) -> None:
        self.__dict__["_word_searcher"] = words

    def close(self) -> None:
        if "_word_searcher" in self.__dict__:
            self._words.close()
        self.close_vectors()
        if self._readers is not None:
            self._readers.close()
        # SQLite folds the log into the file when its last connection closes; with other
        # connections still open (a server, another process) it would stay until theirs.
        self.fold_log()
        self.conn.close()

    def enrichments(self) -> Enrichments:
        """The write-time enrichments this file keeps (see :class:`base.Enriching`)."""
        from trove.backends.sqlite.enrich import Enrichments

        return Enrichments(self)

    def event_log(self) -> EventLog:
        """The file's log of committed changes (see :class:`base.LoggingEvents`)."""
        from trove.backends.sqlite.events import EventLog

        return EventLog(self)

    def index_problems(self) -> list[str]:
        """What SQLite, FTS5 and the word index comparison find wrong (``trove check``)."""
        from trove.backends.sqlite.checks import file_problems

        return file_problems(self.conn)

    def fold_log(self) -> None:
        """Take the write-ahead log into the file and empty it: after a bulk write, and
        at close, so a store at rest is its file (see :func:`connection.fold_log`)."""
        if not self.memory and not self.conn.read_only:
            checkpoint_every(self.conn, CHECKPOINT_PAGES)  # a bulk write's mark ends here
            fold_log(self.conn, self.path, self._busy_timeout_ms)

    def warm(self) -> None:
        """Load the in-memory indexes now rather than at the first query that needs them."""
        self._words.warm()
        self.warm_vectors()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that all see one state of the file (an export): one read transaction.
        Other processes write on (WAL keeps the snapshot); this process's other threads
        wait for the connection meanwhile, as they would for a statement. Read only:
        inside a write transaction the reads already see one state."""
        with self.conn.lock:
            if self._depth:
                yield
                return
            self.conn.execute("BEGIN")  # deferred: the snapshot starts at the first read
            try:
                self.conn.execute("SELECT count(*) FROM meta")
                yield
            finally:
                if not self.conn.raw.getautocommit():
                    self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; nests (inner blocks join the outer transaction)."""
        if self.conn.read_only:
            raise StoreError(
                f"{self.path} is open read-only (the file or its folder is not writable): "
                "searches and reads work, writes do not"
            )
        with self.conn.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            # IMMEDIATE takes the write lock up front (waiting up to the busy timeout): a
            # transaction that reads first and then writes could not wait, since SQLite
            # refuses to upgrade a reader while another connection writes.
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            if self._readers is not None:  # this thread reads its own writes
                self._readers.writer = threading.get_ident()
            if not self.memory:  # a memory store's cache is the store
                set_cache(self.conn, WRITE_CACHE_KB)
            try:
                try:
                    yield
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                else:
                    if self.conn.broken is not None:
                        if not self.conn.raw.getautocommit():  # SQLite may have ended it
                            self.conn.execute("ROLLBACK")
                        raise StoreError(
                            "the transaction was rolled back: a batch of its writes "
                            f"could not be indexed ({self.conn.broken})"
                        ) from self.conn.broken
                    self.conn.execute("COMMIT")
            except UNWRITABLE as exc:
                if not self.conn.raw.getautocommit():  # a failed COMMIT leaves it open
                    with contextlib.suppress(apsw.Error):
                        self.conn.execute("ROLLBACK")
                raise StoreError(f"cannot write to {self.path}: {exc} (disk full?)") from None
            else:
                # Told in commit order, still under the lock (index_changes.py).
                self._index_changes.tell_words(self.__dict__.get("_word_searcher"))
                if self._searcher is not None:  # one made later reads the file
                    self._commits.put(self._index_changes)
            finally:
                self._depth = 0
                if self._readers is not None:
                    self._readers.writer = None
                self._index_changes = IndexChanges()
                self.conn.broken = None
                if not self.memory:  # the pages beyond it are freed
                    set_cache(self.conn, READ_CACHE_KB)
        # Outside the lock: the vector index reads the file under its own (index_changes.py).
        self._commits.apply(lambda: self._searcher, self.vectors_reset)
