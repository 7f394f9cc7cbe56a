"""Bulk vector writes of the PostgreSQL backend: the HNSW index set aside during a large
load and built once after it.

pgvector inserts each vector into the HNSW graph as it is written, and that dominated
bulk writes (2,000 one-chunk documents with 384-d vectors: 24.7 of 28.2 s in the vector
inserts, load 9.6). Building the graph once over the whole table is several times
faster than growing it a row at a time (4,000 vectors: COPY into a bare table 0.1 s and
the index built after it 3.5 s, against 20.0 s of inserts into an indexed table; 1,000:
0.06 + 0.5 s against 2.6 s; pgserver 16.2, load 8.4; docs/benchmarks.md). So a batch of
at least ``BULK_ROWS`` vectors going into a table that holds fewer than ``SET_ASIDE_BELOW``
times as many drops the index in its transaction and copies its rows in; the batches
that follow from the same process copy too; the index is built again (``CREATE INDEX IF
NOT EXISTS``) by that process's next smaller batch, its next semantic search, or its
close (or, if it was killed, by the next process's first smaller batch into the table).
Meanwhile searches scan exactly: the same answers, slower on a large table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg
from psycopg import sql

from trove.backends.postgres import hnsw

# A batch of this many vectors is a bulk load ...
BULK_ROWS = 500
# ... into a table holding fewer than this many times the batch (inserting a row costs
# about five times what building the graph over it does): below it, setting the index
# aside and building it again is the faster path.
SET_ASIDE_BELOW = 4

# Memory for building the graph (until the transaction ends): past it pgvector goes on
# on disk, much slower; PostgreSQL's default of 64 MB holds about 30,000 384-d vectors.
BUILD_MEMORY = "512MB"

_ROWS = (
    "SELECT greatest(c.reltuples::bigint, coalesce(s.n_live_tup, 0)) FROM pg_class c "
    "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = %s::regclass"
)


def worth_setting_aside(conn: psycopg.Connection, table: str, batch: int) -> bool:
    """Whether a batch of ``batch`` vectors into ``table`` is better written without the
    index (the table's size from the planner's and the statistics' counts: no scan)."""
    if batch < BULK_ROWS:
        return False
    row = conn.execute(_ROWS, (table,)).fetchone()
    return row is None or int(row[0]) < SET_ASIDE_BELOW * batch


def missing_index(conn: psycopg.Connection, table: str, state: dict[str, object]) -> bool:
    """Whether ``table`` lacks its HNSW index, asked once a table per backend (``state``:
    its ``__dict__``): a writer killed mid-load leaves it so."""
    checked: set[str] = state.setdefault("_index_checked", set())  # type: ignore[assignment]
    if table in checked:
        return False
    checked.add(table)
    row = conn.execute("SELECT to_regclass(%s)", (hnsw.name(table),)).fetchone()
    return row is None or row[0] is None


def build_memory(conn: psycopg.Connection) -> None:
    """Give the index build that follows in this transaction at least ``BUILD_MEMORY``
    (a server configured with more keeps its own: a 1M-vector graph needs about 3 GB)."""
    conn.execute(
        "SELECT set_config('maintenance_work_mem', CASE WHEN "
        "pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes(%s) "
        "THEN %s ELSE current_setting('maintenance_work_mem') END, true)",
        (BUILD_MEMORY, BUILD_MEMORY),
    )


def set_aside(conn: psycopg.Connection, table: str) -> None:
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(hnsw.name(table))))


def copy_vectors(
    cur: psycopg.Cursor, table: str, chunk_ids: Sequence[int], rows: np.ndarray
) -> None:
    """Upsert vectors by binary COPY into a staging table, then one INSERT ... SELECT."""
    cur.execute(
        sql.SQL(
            "CREATE TEMP TABLE trove_vec_stage (LIKE {} INCLUDING DEFAULTS) ON COMMIT DROP"
        ).format(sql.Identifier(table))
    )
    with cur.copy("COPY trove_vec_stage (chunk_id, embedding) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "vector"])
        for i, cid in enumerate(chunk_ids):
            copy.write_row((int(cid), rows[i]))
    cur.execute(
        sql.SQL(
            "INSERT INTO {} (chunk_id, embedding) SELECT chunk_id, embedding FROM "
            "trove_vec_stage ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding"
        ).format(sql.Identifier(table))
    )
    cur.execute("DROP TABLE trove_vec_stage")
