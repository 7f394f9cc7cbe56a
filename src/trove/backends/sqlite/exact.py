"""Exact k-NN by sqlite-vec itself: the answer while the fast index is not loaded.

A process that has not loaded the vector index (a one-shot CLI command, a fresh MCP
server) asks the ``vec0`` table for the k nearest rows: an exact float32 scan, far
quicker than loading every vector, which takes seconds at 100k chunks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from trove.backends.sqlite.parts import SQLiteParts

# vec0 refuses a larger k in a k-NN query.
MAX_K = 4096
_BATCH = 5_000  # candidate ids a statement: point look-ups, ~20 µs each


class ExactScan:
    """The search interface of :class:`VectorIndex`, answered by a ``vec0`` table."""

    def __init__(self, backend: SQLiteParts, table: str) -> None:
        self.backend = backend
        self.table = table

    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        q = np.ascontiguousarray(query, np.float32).reshape(-1)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if candidates is None:
            rows = list(
                self.backend.conn.execute(
                    f"SELECT rowid, distance FROM {self.table} WHERE embedding MATCH ? "
                    "AND k = ? ORDER BY distance",
                    (q.tobytes(), min(k, MAX_K)),
                )
            )
        else:
            rows = self._distances(q, candidates)
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        scores = 1.0 - np.fromiter((r[1] for r in rows), np.float32, len(rows))
        order = np.lexsort((ids, -scores))[:k]
        return ids[order], scores[order].astype(np.float32)

    def _distances(self, q: np.ndarray, candidates: np.ndarray) -> list[tuple[int, float]]:
        """Cosine distance of each candidate's vector to the query (a filtered search)."""
        rows: list[tuple[int, float]] = []
        ids = np.unique(np.asarray(candidates, np.int64)).tolist()
        for start in range(0, len(ids), _BATCH):
            rows += self.backend.conn.execute(
                f"SELECT rowid, vec_distance_cosine(embedding, ?) FROM {self.table} "
                "WHERE rowid IN (SELECT value FROM json_each(?))",
                (q.tobytes(), json.dumps(ids[start : start + _BATCH])),
            )
        return rows
