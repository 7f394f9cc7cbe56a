"""Read replicas: which server a read goes to.

A store opened with standby URLs (``trove.open(primary, replicas=[...])``) sends reads
that are not part of a write to a standby, in turn, and everything else to the primary.
Reads see this handle's own writes: after a write commits, the primary's WAL insert
position (at or past the write's commit record) is remembered, and a standby serves
reads only once ``pg_last_wal_replay_lsn()`` has reached it; until then they go to the
primary. A standby that cannot be reached, or fails a read, is left alone for
``RETRY_S`` and the read runs on the primary: reads are repeated, never lost.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

T = TypeVar("T")

# How long a standby that failed is skipped before it is tried again.
RETRY_S = 5.0
# How long a read waits for a free standby connection before it goes to the primary: a
# standby that went down makes its pool wait for a connection that never comes.
CHECKOUT_S = 0.25
# The WAL insert position as a number (a pg_lsn minus the origin), on the primary...
WRITTEN_LSN = "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"
# ... and what a standby has replayed (NULL on a server that is not a standby).
REPLAYED_LSN = "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint"


class Replicas:
    """The standbys' pools, the write position reads must wait for, and which standby is
    down. Thread-safe: one handle serves every thread of a server."""

    def __init__(self, pools: list[ConnectionPool]) -> None:
        self.pools = pools
        self._down_until = [0.0] * len(pools)
        self._turn = itertools.count()
        self._lock = threading.Lock()
        # The primary's WAL position after this handle's latest write that a standby
        # has not yet been seen to replay; None once one has.
        self._awaited: int | None = None
        self.served = [0] * len(pools)  # reads each standby answered (tests, bench)

    def wrote(self, lsn: int) -> None:
        """A write of this handle committed at or before ``lsn`` on the primary."""
        with self._lock:
            self._awaited = lsn if self._awaited is None else max(self._awaited, lsn)

    def read(self, run: Callable[[psycopg.Connection], T]) -> tuple[bool, T | None]:
        """``(True, run(conn))`` on a standby that is up and has replayed this handle's
        writes; ``(False, None)`` when the read must go to the primary."""
        for index in self._order():
            try:
                with self.pools[index].connection(timeout=CHECKOUT_S) as conn:
                    if not self._caught_up(conn):
                        return False, None
                    value = run(conn)
            except psycopg.errors.QueryCanceled:
                raise  # the search's time budget, not the standby: the caller says so
            except psycopg.errors.TransactionRollback:
                # Canceled by a conflict with recovery (the standby replaying a change
                # to rows the read was using): the primary answers this one.
                return False, None
            except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout):
                self._down_until[index] = time.monotonic() + RETRY_S
                continue
            self.served[index] += 1
            return True, value
        return False, None

    def _order(self) -> list[int]:
        """The standbys that are not resting after a failure, starting with the next one."""
        now = time.monotonic()
        first = next(self._turn) % len(self.pools)
        turn = [(first + i) % len(self.pools) for i in range(len(self.pools))]
        return [i for i in turn if self._down_until[i] <= now]

    def _caught_up(self, conn: psycopg.Connection) -> bool:
        awaited = self._awaited
        if awaited is None:
            return True
        row = conn.execute(REPLAYED_LSN).fetchone()
        replayed = None if row is None else row[0]
        if replayed is None or int(replayed) < awaited:
            return False
        with self._lock:
            if self._awaited == awaited:  # no later write came meanwhile
                self._awaited = None
        return True

    def close(self) -> None:
        for pool in self.pools:
            with contextlib.suppress(Exception):
                pool.close()


def open_pools(
    conninfos: list[str], make: Callable[[str], ConnectionPool]
) -> Iterator[ConnectionPool]:
    """Each standby's pool, opened without waiting: a standby that is down when the store
    opens is a standby to try later, not a failed open."""
    for conninfo in conninfos:
        pool = make(conninfo)
        pool.open(wait=False)
        yield pool
