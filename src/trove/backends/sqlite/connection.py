"""One apsw connection shared by threads, one statement at a time.

apsw does not queue threads on a busy connection: a second thread gets
ThreadingViolationError. A server's request threads, and a hybrid search that embeds the
query on a second thread, share one store, so every use of the connection goes through
this lock and every result is read to the end before the lock is released.
"""

from __future__ import annotations

import threading
from typing import Any

import apsw


class SerializedConnection:
    """The parts of :class:`apsw.Connection` trove uses, safe to call from any thread."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.raw = conn
        # Reentrant: a transaction (sqlite.py) holds it while its thread runs statements.
        self.lock = threading.RLock()

    def execute(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return [tuple(row) for row in self.raw.execute(sql, params)]

    def executemany(self, sql: str, rows: Any) -> None:
        with self.lock:
            for _ in self.raw.executemany(sql, rows):
                pass

    def changes(self) -> int:
        with self.lock:
            return int(self.raw.changes())

    def last_insert_rowid(self) -> int:
        with self.lock:
            return int(self.raw.last_insert_rowid())

    def close(self) -> None:
        with self.lock:
            self.raw.close()
