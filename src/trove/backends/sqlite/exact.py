"""Exact k-NN over the stored vectors: the answer while the fast index is not loaded.

A process that has not loaded the vector index (a one-shot CLI command, a fresh MCP
server) scores every stored vector (or each candidate of a filtered search) against the
query in numpy, a batch of rows at a time: far quicker than loading the index, which
takes seconds at 100k chunks. The stored vectors are int16 codes (vector_codes.py), so
its scores are within ~1e-5 of float32's cosine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from trove.backends.sqlite.vector_codes import decode

if TYPE_CHECKING:
    from trove.backends.sqlite.backend import SQLiteBackend

_BATCH = 5_000  # candidate ids a statement: point look-ups, ~20 µs each


class ExactScan:
    """The search interface of :class:`VectorIndex`, answered from the stored vectors."""

    def __init__(self, backend: SQLiteBackend, table: str) -> None:
        self.backend = backend
        self.table = table

    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        q = np.ascontiguousarray(query, np.float32).reshape(-1)
        best_ids, best = np.zeros(0, np.int64), np.zeros(0, np.float32)
        if k <= 0:
            return best_ids, best
        q = q / max(float(np.linalg.norm(q)), 1e-30)
        rows = (
            self.backend.iter_vectors(self.table) if candidates is None else self._rows(candidates)
        )
        for ids, vectors in rows:
            norms = np.linalg.norm(vectors, axis=1)
            scores = (vectors @ q) / np.where(norms > 0, norms, 1.0)
            best_ids = np.concatenate([best_ids, ids])
            best = np.concatenate([best, scores.astype(np.float32)])
            if len(best) > k:
                keep = np.argpartition(-best, k - 1)[:k]
                best_ids, best = best_ids[keep], best[keep]
        order = np.lexsort((best_ids, -best))[:k]
        return best_ids[order], best[order]

    def _rows(self, candidates: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) of the candidates that have one, a batch at a time."""
        ids = np.unique(np.asarray(candidates, np.int64)).tolist()
        for start in range(0, len(ids), _BATCH):
            rows = list(
                self.backend.conn.execute(
                    f"SELECT id, codes FROM {self.table} "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(ids[start : start + _BATCH]),),
                )
            )
            if rows:
                found = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                yield found, decode([r[1] for r in rows])
