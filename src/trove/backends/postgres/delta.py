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

A chunk's vector is in exactly one of the tables: a write into the delta deletes the
chunk's row from the others (after its own insert, so a fold running meanwhile is either
seen and undone or waits for it), a write into the table deletes it from all first, and
rows move between them only by a DELETE ... RETURNING that feeds one INSERT.

The delta costs searches an exact scan, so it stays small: once a write leaves it with
more than ``DELTA_MAX`` rows, the same write seals it. Its rows move into a new segment
(``<table>_seg_N``, another inheriting table with its own keys) and the segment's HNSW index
is built over them at once, which costs about a twentieth of inserting them into the large
graph one by one (5,000 vectors: 1.5 s to build against about 30 s of inserts into 100k).
A search scans each segment's index beside the table's, in the same Merge Append. So that
searches do not meet ever more segments, ``SEGMENT_FANIN`` segments of one size class
(about ``DELTA_MAX`` × FANIN^level rows) are merged into one, rebuilt, as in a log-structured
merge tree: each vector is built into a graph about log_FANIN(rows written / DELTA_MAX)
times, and a store holds at most FANIN - 1 segments a size class. So a sustained stream
of writes goes on at copy speed plus those builds, not at the rate of HNSW inserts.

A writer also folds the delta, then the segments (smallest first), into the indexed table
in the background (a thread with its own connection, ``FOLD_ROWS`` rows a transaction,
the HNSW inserts the writes were spared), and drops a segment it has emptied, so the
store returns to one graph. It folds once its writer has been quiet for ``QUIET_S``: the
inserts cost what the segments saved, and done during a sustained load on two cores they
took the writer's speed back (30,000 documents into 1M: 522-599 documents/s folding
meanwhile, 707-741 folding after; docs/benchmarks.md). Until then the rows stay in
segments, each of which a search scans beside the table (a few ms each). A writer's close
cancels the fold under way (rolled back: its rows stay where they were for the next
writer): into a 1M-chunk table one fold of ``FOLD_ROWS`` took seconds, which the close
waited for.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.postgres import bulk, hnsw

# A batch goes to the delta when the indexed table holds at least this many rows (below,
# inserting into the graph is cheap enough, and small stores keep one table) ...
DELTA_FROM = 20_000
# A write that leaves the delta with more than this many rows seals it into a segment.
DELTA_MAX = 5_000
# This many segments of one size class are merged into one.
SEGMENT_FANIN = 4
# Rows folded into the indexed table a transaction (about 1 s of HNSW inserts at 100k).
FOLD_ROWS = 200
# The folder gives up a lock it waited this long for (a writer or a delete holds it).
_FOLD_LOCK_TIMEOUT = "200ms"
# The folder waits until its writer has not written for this long: while writes go on,
# the server's time is theirs (the HNSW inserts of a fold took the second of two cores
# from a sustained load).
QUIET_S = 2.0
# The folder looks again this often, this many times, before it stops (a write's rows
# become visible when its transaction commits, after the write kicked the folder).
_IDLE_WAIT_S = 0.2
_IDLE_LOOKS = 5

_SIZES = (
    "SELECT greatest(c.reltuples::bigint, coalesce(s.n_live_tup, 0)) FROM pg_class c "
    "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = %s::regclass"
)
_CHILDREN = (
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
    "WHERE i.inhparent = %s::regclass"
)


def name(table: str) -> str:
    """The delta table of vector table ``table``."""
    return f"{table}_delta"


def route(conn: psycopg.Connection, table: str) -> str | None:
    """The delta table a batch of vectors into ``table`` goes to, or None (into the table
    itself: a small one). The table's size from the statistics: no scan."""
    row = conn.execute(_SIZES, (table,)).fetchone()
    held = int(row[0] or 0) if row else 0
    return None if held < DELTA_FROM else name(table)


def write(
    conn: psycopg.Connection,
    cur: psycopg.Cursor,
    table: str,
    chunk_ids: Sequence[int],
    rows: np.ndarray,
) -> None:
    """Upsert vectors into ``table``'s delta (created on first use), drop the same chunks'
    rows from the table and its segments, and seal the delta if it is now full."""
    delta = name(table)
    found = conn.execute("SELECT to_regclass(%s)", (delta,)).fetchone()
    if found is None or found[0] is None:
        _create(conn, table, delta)
    bulk.copy_vectors(cur, delta, chunk_ids, rows)
    cur.execute(
        sql.SQL("DELETE FROM {} WHERE chunk_id = ANY(%s) AND tableoid <> %s::regclass").format(
            sql.Identifier(table)
        ),
        ([int(c) for c in chunk_ids], delta),
    )
    if _count(conn, delta) > DELTA_MAX:
        seal(conn, table)


def forget(cur: psycopg.Cursor, table: str, chunk_ids: Sequence[int]) -> None:
    """Before a write into the table itself: the same chunks' rows out of both (the
    table's delta included, being its child)."""
    cur.execute(
        sql.SQL("DELETE FROM {} WHERE chunk_id = ANY(%s)").format(sql.Identifier(table)),
        ([int(c) for c in chunk_ids],),
    )


def _create(conn: psycopg.Connection, table: str, child: str) -> None:
    # Two writers' first delta at once: one creates it, the other waits and finds it.
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (name(table),))
    conn.execute(
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {child} (chunk_id bigint PRIMARY KEY "
            "REFERENCES chunk (id) ON DELETE CASCADE) INHERITS ({table})"
        ).format(child=sql.Identifier(child), table=sql.Identifier(table))
    )


# --- segments ---------------------------------------------------------------------------


def segments(conn: psycopg.Connection, table: str) -> list[str]:
    """``table``'s segments, oldest first."""
    pattern = re.compile(re.escape(table) + r"_seg_([0-9]+)")
    found = [
        (int(m.group(1)), m.group(0))
        for (child,) in conn.execute(_CHILDREN, (table,)).fetchall()
        if (m := pattern.fullmatch(str(child)))
    ]
    return [child for _, child in sorted(found)]


def size_class(rows: int) -> int:
    """The size class of a segment of ``rows`` rows: 0 up to about 2 × DELTA_MAX, then one
    more each time the size grows SEGMENT_FANIN-fold."""
    return max(0, math.floor(math.log(max(rows, 1) * 2 / DELTA_MAX, SEGMENT_FANIN)))


def seal(conn: psycopg.Connection, table: str) -> None:
    """Move the delta's rows into a new, indexed segment (in the caller's transaction),
    then merge segments while a size class holds SEGMENT_FANIN of them."""
    delta = name(table)
    # One sealer at a time; the second finds the delta the first left, and seals it only
    # if it is still full (its own rows included: they are visible to it).
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (delta,))
    if _count(conn, delta) <= DELTA_MAX:
        return
    classes: dict[int, list[tuple[str, int]]] = {}
    for segment in segments(conn, table):
        held = _count(conn, segment)
        if held:  # an empty one is dropped by the folder that emptied it
            classes.setdefault(size_class(held), []).append((segment, held))
    made = _segment(conn, table, [delta])
    classes.setdefault(size_class(made[1]), []).append(made)
    level = 0
    while level <= max(classes):
        group = classes.get(level, [])
        if len(group) >= SEGMENT_FANIN:
            classes[level] = []
            made = _segment(conn, table, [segment for segment, _ in group])
            classes.setdefault(size_class(made[1]), []).append(made)
            for segment, _ in group:  # emptied; the writer commits right after
                conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(segment)))
        level += 1


def _segment(conn: psycopg.Connection, table: str, sources: Sequence[str]) -> tuple[str, int]:
    """A new segment holding the rows of ``sources`` (moved), its index built over them
    in the table's form (so that a k-NN scans it beside the table's)."""
    taken = [int(s.rsplit("_", 1)[1]) for s in segments(conn, table)]
    segment = f"{table}_seg_{max(taken, default=0) + 1}"
    _create(conn, table, segment)
    moved = sum(_move(conn, source, segment) for source in sources)
    bulk.build_memory(conn)
    hnsw.create(conn, segment, hnsw.form_of(conn, table)[0])
    return segment, moved


def _move(conn: psycopg.Connection, source: str, into: str, limit: int | None = None) -> int:
    """Move rows of ``source`` into ``into`` in one statement (up to ``limit`` of them,
    skipping rows another transaction holds); how many moved."""
    picked = (
        sql.SQL(
            "WHERE chunk_id IN (SELECT chunk_id FROM ONLY {source} ORDER BY chunk_id "
            "LIMIT {limit} FOR UPDATE SKIP LOCKED)"
        ).format(source=sql.Identifier(source), limit=sql.Literal(limit))
        if limit is not None
        else sql.SQL("")
    )
    cur = conn.execute(
        sql.SQL(
            "WITH moved AS (DELETE FROM ONLY {source} {picked} RETURNING chunk_id, embedding) "
            "INSERT INTO {into} (chunk_id, embedding) SELECT chunk_id, embedding FROM moved "
            "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding"
        ).format(source=sql.Identifier(source), picked=picked, into=sql.Identifier(into))
    )
    return max(cur.rowcount, 0)


def _count(conn: psycopg.Connection, child: str) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM ONLY {}").format(sql.Identifier(child)))
    found = row.fetchone()
    return int(found[0]) if found else 0


# --- folding ----------------------------------------------------------------------------


def fold(conn: psycopg.Connection, table: str, limit: int = FOLD_ROWS) -> int:
    """Move up to ``limit`` rows into the indexed table, from the delta, or else from the
    smallest segment (dropped once empty); how many moved (rows a writer holds are
    skipped). In autocommit: one transaction a statement."""
    delta = name(table)
    found = conn.execute("SELECT to_regclass(%s)", (delta,)).fetchone()
    if found is not None and found[0] is not None:
        moved = _move(conn, delta, table, limit)
        if moved:
            return moved
    try:
        held = [(_count(conn, segment), segment) for segment in segments(conn, table)]
        for rows, segment in sorted(held):
            if rows:
                return _move(conn, segment, table, limit)
            _drop_empty(conn, table, segment)
    except psycopg.errors.UndefinedTable:
        pass  # a writer merged a segment away meanwhile: looked at again next time
    return 0


def _drop_empty(conn: psycopg.Connection, table: str, segment: str) -> None:
    """Drop ``segment`` if it is still empty and no writer is sealing (the sealer's lock:
    a seal counts the segments it lists), unless a search holds it (lock_timeout)."""
    with contextlib.suppress(psycopg.errors.LockNotAvailable), conn.transaction():
        free = conn.execute("SELECT pg_try_advisory_xact_lock(hashtext(%s))", (name(table),))
        if free.fetchone() == (True,) and _count(conn, segment) == 0:
            conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(segment)))


class Folder:
    """Folds one table's delta and segments in a thread of its own, on a connection of its
    own, until they stay empty or :meth:`stop`."""

    def __init__(self, connect: Callable[[], psycopg.Connection], table: str) -> None:
        self._connect = connect
        self.table = table
        self._stopping = threading.Event()
        self._kicked = threading.Event()
        self._last_kick = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection | None = None  # the thread's, while it folds
        self.folded = 0

    def kick(self) -> None:
        """New rows are (or are about to be) in the delta: fold them."""
        with self._lock:
            self._last_kick = time.monotonic()
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
            wait = self._last_kick + QUIET_S - time.monotonic()
            if wait > 0:  # writes go on: fold after them
                if self._stopping.wait(wait):
                    return
                continue
            self._kicked.clear()
            moved = fold(conn, self.table)
            self.folded += moved
            if moved:
                looks = 0
                continue
            looks = 0 if self._kicked.is_set() else looks + 1
            if looks >= _IDLE_LOOKS or self._stopping.wait(_IDLE_WAIT_S):
                return
