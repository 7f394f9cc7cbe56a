"""Many documents and their chunks in a few statements: the bulk half of the write path.

Row by row, a batch of new one-chunk documents cost six statements each; here a batch is
one ``executemany`` per table, one read of the replaced documents' old chunk ids and one
delete. Chunk ids are given explicitly, from the table's AUTOINCREMENT counter, so they
are known without a round trip per row: the caller holds the write transaction
(``BEGIN IMMEDIATE``), so no other writer can take them, and an explicit id above the
counter moves it on (ids are still never reused, which the index caches rely on).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from trove.backends.base import ChunkRow, DocumentWrite
from trove.backends.rows import CHUNK_COLUMNS, chunk_values
from trove.backends.sqlite.connection import SerializedConnection
from trove.models import Document
from trove.search.query import cjk_text

_PART = 500  # ids per IN (...) list, well under SQLite's parameter limit


def put_many(
    conn: SerializedConnection,
    writes: Sequence[DocumentWrite],
    columns: Sequence[str],
    row: Callable[[Document], dict[str, Any]],
) -> tuple[list[int], list[int]]:
    """Write documents (and, where ``reindex``, replace their chunks); returns (old chunk
    ids, new chunk ids in the order of ``writes`` and their chunks)."""
    full = [w.doc for w in writes if w.reindex]
    if full:
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
        conn.executemany(
            f"INSERT INTO document ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT (id) DO UPDATE SET {updates}",
            list(map(itemgetter(*columns), map(row, full))),
        )
    header = [w.doc for w in writes if not w.reindex]
    if header:
        kept = [c for c in columns if c not in ("id", "text")]
        sets = ", ".join(f"{c} = ?" for c in kept)
        values = [row(doc) for doc in header]
        conn.executemany(
            f"UPDATE document SET {sets} WHERE id = ?",
            [(*(v[c] for c in kept), v["id"]) for v in values],
        )
    dropped = _drop_chunks(conn, [w.doc.id for w in writes if w.reindex and not w.fresh])
    return dropped, _insert_chunks(conn, [(w.doc.id, w.chunks) for w in writes if w.reindex])


def _drop_chunks(conn: SerializedConnection, doc_ids: Sequence[str]) -> list[int]:
    dropped: list[int] = []
    for start in range(0, len(doc_ids), _PART):
        part = tuple(doc_ids[start : start + _PART])
        marks = ", ".join("?" * len(part))
        found = conn.execute(f"SELECT id FROM chunk WHERE doc_id IN ({marks})", part)
        if found:
            dropped.extend(int(r[0]) for r in found)
            conn.execute(f"DELETE FROM chunk WHERE doc_id IN ({marks})", part)
    return dropped


def _insert_chunks(
    conn: SerializedConnection, chunks: Sequence[tuple[str, Sequence[ChunkRow]]]
) -> list[int]:
    count = sum(len(rows) for _, rows in chunks)
    if not count:
        return []
    # The counter, or the largest id if the counter lags (a table never written through
    # AUTOINCREMENT's path); both under the write lock the caller holds.
    first = 1 + int(
        conn.execute(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunk'), 0), "
            "coalesce((SELECT max(id) FROM chunk), 0))"
        )[0][0]
    )
    ids = list(range(first, first + count))
    params = []
    grams = []
    it = iter(ids)
    for doc_id, rows in chunks:
        for r in rows:
            chunk_id = next(it)
            params.append((chunk_id, *chunk_values(doc_id, r)))
            cjk = cjk_text(r.head, r.text)
            if cjk is not None:  # only text with CJK pays for the bigram index
                grams.append((chunk_id, cjk))
    conn.executemany(
        f"INSERT INTO chunk (id, {CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params,
    )
    if grams:
        conn.executemany("INSERT INTO chunk_cjk (rowid, grams) VALUES (?, ?)", grams)
    return ids
