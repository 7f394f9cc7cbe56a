"""New vectors of a large PostgreSQL store: written to a small unindexed delta table,
searched exactly beside the HNSW index, and folded into the indexed table after.

pgvector adds each vector it is given to the HNSW graph at once, and at 100k chunks that
cost about 6.5 ms a vector (154 documents/s into the 100k store, load 1; bulk.py's set-aside
path only pays off into a table that holds fewer than four times the batch). So a batch
into a table of at least ``DELTA_FROM`` rows is copied into ``<table>_delta`` instead: a
table that INHERITS the vector table, with its own primary key and foreign key (ON DELETE
CASCADE) and no HNSW index. Every query of the vector table reads the delta with it, with
no change to the query: the k-NN (``ORDER BY embedding <=> q LIMIT n``) becomes a Merge
Append of the HNSW scan of the table and an exact sort of the delta, counts and joins see
both, and deletes cascade to both. A written vector is so found by the next search, and
ranked exactly.

A chunk's vector is in exactly one of the two: a write into the delta deletes the chunk's
row from the table (after its own insert, so a fold running meanwhile is either seen and
undone or waits for it), and a write into the table deletes it from both first.

The delta costs searches an exact scan (about 2 microseconds a row on this machine idle,
5 under load), so it stays small: a writer folds it in the background (a thread with its
own connection, ``FOLD_ROWS`` rows a transaction, the HNSW inserts the write was spared),
and once the delta holds ``DELTA_MAX`` rows, a batch goes into the indexed table as before.
So bursts of up to about ``DELTA_MAX`` documents are written at copy speed, and a sustained
load beyond it at the rate of HNSW inserts. A writer's close cancels the fold under way
(rolled back: its rows stay in the delta for the next writer): into a 1M-chunk table one
fold of ``FOLD_ROWS`` took seconds, which the close waited for.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.postgres import bulk

# A batch goes to the delta when the indexed table holds at least this many rows (below,
# inserting into the graph is cheap enough, and small stores keep one table) ...
DELTA_FROM = 20_000
# ... and the delta would hold at most this many rows after it.
DELTA_MAX = 5_000
# Rows folded into the indexed table a transaction (about 1 s of HNSW inserts at 100k).
FOLD_ROWS = 200
# The folder gives up a lock it waited this long for (a writer or a delete holds it).
_FOLD_LOCK_TIMEOUT = "200ms"
# The folder looks again this often, this many times, before it stops (a write's rows
# become visible when its transaction commits, after the write kicked the folder).
_IDLE_WAIT_S = 0.2
_IDLE_LOOKS = 5

_SIZES = (
    "SELECT (SELECT greatest(c.reltuples::bigint, coalesce(s.n_live_tup, 0)) FROM pg_class c "
    "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = %s::regclass), "
    "(SELECT coalesce(s.n_live_tup, 0) FROM pg_class c LEFT JOIN pg_stat_user_tables s "
    "ON s.relid = c.oid WHERE c.oid = to_regclass(%s))"
)


def name(table: str) -> str:
    """The delta table of vector table ``table``."""
    return f"{table}_delta"


def route(conn: psycopg.Connection, table: str, batch: int) -> str | None:
    """The delta table a batch of ``batch`` vectors into ``table`` goes to, or None
    (into the table: a small one, or a full delta). Sizes from the statistics: no scan."""
    row = conn.execute(_SIZES, (table, name(table))).fetchone()
    held, pending = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
    if held < DELTA_FROM or pending + batch > DELTA_MAX:
        return None
    return name(table)


def write(
    conn: psycopg.Connection,
    cur: psycopg.Cursor,
    table: str,
    chunk_ids: Sequence[int],
    rows: np.ndarray,
) -> None:
    """Upsert vectors into ``table``'s delta (created on first use), then drop the same
    chunks' rows from the table itself."""
    delta = name(table)
    found = conn.execute("SELECT to_regclass(%s)", (delta,)).fetchone()
    if found is None or found[0] is None:
        _create(conn, table)
    bulk.copy_vectors(cur, delta, chunk_ids, rows)
    cur.execute(
        sql.SQL("DELETE FROM ONLY {} WHERE chunk_id = ANY(%s)").format(sql.Identifier(table)),
        ([int(c) for c in chunk_ids],),
    )


def forget(cur: psycopg.Cursor, table: str, chunk_ids: Sequence[int]) -> None:
    """Before a write into the table itself: the same chunks' rows out of both (the
    table's delta included, being its child)."""
    cur.execute(
        sql.SQL("DELETE FROM {} WHERE chunk_id = ANY(%s)").format(sql.Identifier(table)),
        ([int(c) for c in chunk_ids],),
    )


def _create(conn: psycopg.Connection, table: str) -> None:
    # Two writers' first delta at once: one creates it, the other waits and finds it.
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (name(table),))
    conn.execute(
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {delta} (chunk_id bigint PRIMARY KEY "
            "REFERENCES chunk (id) ON DELETE CASCADE) INHERITS ({table})"
        ).format(delta=sql.Identifier(name(table)), table=sql.Identifier(table))
    )


def fold(conn: psycopg.Connection, table: str, limit: int = FOLD_ROWS) -> int:
    """Move up to ``limit`` rows of the delta into the indexed table, in one statement
    (rows a writer holds are skipped); how many moved."""
    cur = conn.execute(
        sql.SQL(
            "WITH moved AS (DELETE FROM ONLY {delta} WHERE chunk_id IN (SELECT chunk_id "
            "FROM ONLY {delta} ORDER BY chunk_id LIMIT %s FOR UPDATE SKIP LOCKED) "
            "RETURNING chunk_id, embedding) "
            "INSERT INTO {table} (chunk_id, embedding) SELECT chunk_id, embedding FROM moved "
            "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding"
        ).format(delta=sql.Identifier(name(table)), table=sql.Identifier(table)),
        (limit,),
    )
    return max(cur.rowcount, 0)


def pending(conn: psycopg.Connection, table: str) -> int:
    """Rows in ``table``'s delta (0 without one): counted."""
    found = conn.execute("SELECT to_regclass(%s)", (name(table),)).fetchone()
    if found is None or found[0] is None:
        return 0
    row = conn.execute(
        sql.SQL("SELECT count(*) FROM ONLY {}").format(sql.Identifier(name(table)))
    ).fetchone()
    return int(row[0]) if row else 0


class Folder:
    """Folds one table's delta in a thread of its own, on a connection of its own, until
    the delta stays empty or :meth:`stop`."""

    def __init__(self, connect: Callable[[], psycopg.Connection], table: str) -> None:
        self._connect = connect
        self.table = table
        self._stopping = threading.Event()
        self._kicked = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection | None = None  # the thread's, while it folds
        self.folded = 0

    def kick(self) -> None:
        """New rows are (or are about to be) in the delta: fold them."""
        with self._lock:
            self._kicked.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name=f"trove-fold-{self.table}", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """Stop now: the fold under way is cancelled and rolled back (the rest stays in the
        delta, searched exactly, for the next writer to fold)."""
        self._stopping.set()
        with self._lock:
            thread, conn = self._thread, self._conn
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.cancel_safe(timeout=5.0)
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            with self._connect() as conn:
                with self._lock:  # seen by stop(), which is then seen by _loop
                    self._conn = conn
                conn.execute("SELECT set_config('lock_timeout', %s, false)", (_FOLD_LOCK_TIMEOUT,))
                self._loop(conn)
        except psycopg.Error:
            return  # the server went away, a lock waited too long, stop() cancelled a fold
        finally:
            with self._lock:
                self._conn = None

    def _loop(self, conn: psycopg.Connection) -> None:
        looks = 0
        while not self._stopping.is_set():
            self._kicked.clear()
            moved = fold(conn, self.table)
            self.folded += moved
            if moved:
                looks = 0
                continue
            looks = 0 if self._kicked.is_set() else looks + 1
            if looks >= _IDLE_LOOKS or self._stopping.wait(_IDLE_WAIT_S):
                return
