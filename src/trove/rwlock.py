"""A reader-writer lock: many readers together, one writer alone, writers not starved.

Each store holds one (:meth:`Store.reading`, :meth:`Store.writing`) for the threads that
share it, such as the servers' request handlers. The backend runs one SQL statement at a
time and keeps a transaction to its thread, but a write is more than its transaction: it
reads first (is this key taken? which chunks change?), commits, then updates the
in-memory vector index. Two writes to one item could interleave those steps, and a search
between them could see the rows without their vectors; so searches and reads run
together and a write runs alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    """Readers run together; a writer runs alone, and a waiting writer holds off new
    readers (so a steady stream of searches cannot starve writes)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            except BaseException:  # interrupted while waiting: let held-off readers go on
                self._waiting -= 1
                self._cond.notify_all()
                raise
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()
