"""The rescoring step of a cached vector index, from the store's own int16 codes.

A search ranks every candidate by the index's int8 codes, then rescores the best
k + max(k/2, 32) from full-precision codes (search/vectors.py). An index loaded in memory
keeps those as its own int16 codes; an index mapped from the cache (index_cache.py) reads
them from the store's vector table (vector_codes.py), which holds each vector once at the
same precision: one statement a search, for a few dozen to a few hundred rows by id. The
table's codes are of the vector as stored, not rotated, so the query is turned back (the
rotation is orthogonal) instead of every row turned forward.

The statement runs on a read-only connection of its own (readers.py), so a search does
not wait for a writer that holds the store's connection; where none can be opened, on
the store's connection. A row the table no longer has (its chunk deleted by another
process since the index caught up) scores -1, the least a cosine can be: the search's
visibility checks drop such a chunk anyway.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from trove.backends.sqlite.readers import Readers
from trove.backends.sqlite.vector_codes import views

if TYPE_CHECKING:
    import numpy as np

    from trove.backends.sqlite.parts import SQLiteParts
else:  # numpy loads where first used
    from trove.lazy import numpy as np

_BUSY_MS = 5_000
_GONE = -1.0


class StoredScores:
    """``rescore(rows, rotated query)`` of an index adopted from a cache file, reading the
    rows' vectors from ``table`` by the index's ``ids``."""

    def __init__(
        self, backend: SQLiteParts, table: str, ids: np.ndarray, rotation: np.ndarray
    ) -> None:
        self._backend, self._ids, self._rotation = backend, ids, rotation
        self._sql = f"SELECT id, codes FROM {table} WHERE id IN (SELECT value FROM json_each(?))"
        self._readers = Readers(backend.path, _BUSY_MS)
        weakref.finalize(self, self._readers.close)

    def __call__(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        wanted = self._ids[rows]
        scores = np.full(len(rows), _GONE, np.float32)
        if not len(rows):
            return scores
        found = self._read(wanted)
        if not found:
            return scores
        found_ids = np.fromiter((row[0] for row in found), np.int64, len(found))
        scale, codes = views([row[1] for row in found])
        plain = np.einsum("ij,j->i", self._rotation, q)  # the query before the rotation
        stored = np.einsum("ij,j->i", codes, plain).astype(np.float32) * scale
        order = np.argsort(wanted, kind="stable")
        at = order[np.searchsorted(wanted[order], found_ids)]
        scores[at] = stored
        return scores

    def _read(self, ids: np.ndarray) -> list[tuple[int, bytes]]:
        text = "[" + ",".join(map(str, np.sort(ids).tolist())) + "]"
        rows = self._readers.rows(self._sql, (text,))
        if rows is None:  # no connection of its own: the store's
            rows = list(self._backend.conn.execute(self._sql, (text,)))
        return rows
