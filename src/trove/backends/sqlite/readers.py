"""Read-only connections of their own for a search's index statements, so a long one does
not hold the store's one connection.

Every use of the store's connection waits for its lock (connection.py), so while one
search's FTS5 statement ran (a raw query of thousands of terms, up to its whole time
budget) every other reader waited with it: a ``GET /v1/stats`` beside a 100 KB raw
search over HTTP answered after 139 s. On a file in WAL mode, readers on other
connections do not wait for one another (nor for the writer), so a search ranks on a
connection borrowed from here and holds no lock another thread needs.

Not for a store in memory (no other connection sees it), nor on the thread of an open
transaction, whose writes, not yet committed, only the store's own connection sees: the
caller asks :meth:`Readers.usable`.
"""

from __future__ import annotations

import threading
from typing import Any

import apsw

from trove.backends.sqlite.connection import rows_within_budget

# Connections kept open between searches (more are opened while more searches run at once).
_KEEP = 4
# Page cache of each (KiB): the statement reads posting lists, the store's connection
# keeps the large cache.
_CACHE_KB = 8_000


class Readers:
    """Read-only connections to one store file, lent one statement at a time."""

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._idle: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        # The thread that holds the store's open transaction, if any (backend.py).
        self.writer: int | None = None

    def usable(self) -> bool:
        """Whether this thread may read on its own connection (see the module's doc)."""
        return not self._closed and self.writer != threading.get_ident()

    def rows(self, sql: str, params: Any) -> list[tuple[Any, ...]] | None:
        """Every row of one read statement, within the search's budget; None if no
        connection of its own can be opened (then the store's connection reads)."""
        try:
            conn = self._take()
        except apsw.CantOpenError:  # a folder where the -shm file cannot be made
            self._closed = True
            return None
        try:
            return rows_within_budget(conn, sql, params)
        finally:
            self._give(conn)

    def _take(self) -> apsw.Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        conn = apsw.Connection(self.path, flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(self.busy_timeout_ms)
        conn.execute(f"PRAGMA cache_size = -{_CACHE_KB}")
        return conn

    def _give(self, conn: apsw.Connection) -> None:
        with self._lock:
            keep = not self._closed and len(self._idle) < _KEEP
            if keep:
                self._idle.append(conn)
        if not keep:
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
