"""Stored vectors as int16 codes in a plain table (schema 15).

Search reads the vector index (cache.py's file, or the index loaded in memory),
never the stored vectors: those are read to build that index, to answer exactly before
it exists (exact.py), to reuse the vectors of unchanged text, and to copy or export a
store. None of these needs float32, so a vector is kept once, as a row of
``chunk_vec_N (id, codes)``: a float32 scale, then one int16 code a coordinate
(``code * scale`` is the coordinate; the scale is the row's largest magnitude / 32767).
That is 4 + 2 x dimension bytes, against sqlite-vec's 4 x dimension: on SciFact (384-d)
the vectors take ~826 bytes a chunk at rest instead of 1,650 (docs/benchmarks.md,
issue 33). A coordinate read back is within half a step of what was written: 1.5e-5 x the
row's largest coordinate (a 384-d unit vector's is ~0.2, so ~3e-6), far below what moves
a ranking (the index's own int16 codes are as fine) but not the float32 bits a caller
wrote. The index ``chunk_vec_N_ids`` is the list of ids alone: the count and the ids a
cache is checked against are read from it, not from every row's codes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import apsw

from trove.backends.vector_lock import LOCK_KEY, read_lock
from trove.errors import CorruptStore

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

_STEPS = 32767.0  # the largest code
_HEADER = 4  # bytes of the float32 scale before the codes
TABLE = re.compile(r"chunk_vec_[0-9]+")
TRIGGER = "chunk_vec_ad"


def table_sql(table: str) -> list[str]:
    """The statements that create an empty vector table named ``table``."""
    return [
        f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, codes BLOB NOT NULL)",
        f"CREATE INDEX {table}_ids ON {table} (id)",
    ]


def trigger_sql(table: str) -> str:
    """A chunk's vector goes with the chunk."""
    return (
        f"CREATE TRIGGER {TRIGGER} AFTER DELETE ON chunk BEGIN "
        f"DELETE FROM {table} WHERE id = old.id; END"
    )


def encode(vectors: np.ndarray) -> list[bytes]:
    """One stored row's ``codes`` a vector."""
    if len(vectors) == 0:
        return []
    rows = np.asarray(vectors, np.float32).reshape(len(vectors), -1)
    n, width = len(rows), _HEADER + 2 * rows.shape[1]
    top = np.maximum(rows.max(axis=1), -rows.min(axis=1))
    scale = np.where(top > 0, top / _STEPS, 1.0).astype("<f4")
    scaled = rows / scale[:, None]
    np.rint(scaled, out=scaled)
    np.clip(scaled, -_STEPS, _STEPS, out=scaled)
    packed = np.empty((n, width), np.uint8)
    packed[:, :_HEADER] = scale.view(np.uint8).reshape(n, _HEADER)
    packed[:, _HEADER:].view("<i2")[...] = scaled
    joined = packed.tobytes()  # a row's bytes are a slice of one copy, not a copy each
    return [joined[start : start + width] for start in range(0, n * width, width)]


def decode(blobs: list[bytes]) -> np.ndarray:
    """The float32 vectors of stored rows (``codes`` blobs of one table), one row each."""
    scale, codes = views(blobs)
    return codes.astype(np.float32) * scale[:, None]


def views(blobs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(scales, int16 codes) of stored rows, read in place from their bytes joined."""
    if not blobs:
        return np.zeros(0, np.float32), np.zeros((0, 0), np.int16)
    joined, width = b"".join(blobs), len(blobs[0])
    n, dimension = len(blobs), (width - _HEADER) // 2
    if len(joined) != n * width or width < _HEADER or width % 2:
        raise CorruptStore("stored vectors of different lengths in one table: the file is damaged")
    scale = np.ndarray((n,), "<f4", joined, 0, (width,))
    codes = np.ndarray((n, dimension), "<i2", joined, _HEADER, (width, 2))
    return scale, codes


def m015_vector_codes(conn: apsw.Connection) -> None:
    """Each sqlite-vec ``vec0`` vector table becomes a plain table of int16 codes, under
    the same name (the lock and the index cache's file name keep it). Runs again safely:
    a table already plain is left as it is."""
    # The backend loaded sqlite-vec into ``conn``: vec0 tables can be neither read nor
    # dropped without it.
    conn.execute(f"DROP TRIGGER IF EXISTS {TRIGGER}")
    old = [
        str(name)
        for name, sql in conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
        if TABLE.fullmatch(str(name)) and str(sql).upper().startswith("CREATE VIRTUAL TABLE")
    ]
    for table in old:
        _convert(conn, table)
    rows = list(conn.execute("SELECT value FROM meta WHERE key = ?", (LOCK_KEY,)))
    lock = read_lock(rows[0][0]) if rows else None
    if lock is not None:
        conn.execute(trigger_sql(lock.table))


def _convert(conn: apsw.Connection, table: str) -> None:
    new = f"{table}_codes"
    conn.execute(f"CREATE TABLE {new} (id INTEGER PRIMARY KEY, codes BLOB NOT NULL)")
    after = 0
    while True:
        rows = list(
            conn.execute(
                f"SELECT rowid, embedding FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 20000",
                (after,),
            )
        )
        if not rows:
            break
        vectors = np.frombuffer(b"".join(r[1] for r in rows), np.float32)
        codes = encode(vectors.reshape(len(rows), -1))
        conn.executemany(
            f"INSERT INTO {new} (id, codes) VALUES (?, ?)",
            ((int(r[0]), blob) for r, blob in zip(rows, codes, strict=True)),
        )
        after = int(rows[-1][0])
    conn.execute(f"DROP TABLE {table}")
    conn.execute(f"ALTER TABLE {new} RENAME TO {table}")
    conn.execute(table_sql(table)[1])
