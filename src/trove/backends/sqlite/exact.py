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

from trove.backends.sqlite.vector_codes import views

if TYPE_CHECKING:
    from trove.backends.sqlite.parts import SQLiteParts

_BATCH = 5_000  # candidate ids a statement: point look-ups, ~20 µs each
_SCAN = 20_000  # rows a statement in a scan of every row: bounds temporary memory


class ExactScan:
    """The search interface of :class:`VectorIndex`, answered from the stored vectors."""

    def __init__(self, backend: SQLiteParts, table: str) -> None:
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
        rows = self._all() if candidates is None else self._rows(candidates)
        for ids, blobs in rows:
            # Cosine from the codes themselves: a row's scale cancels out.
            codes = views(blobs)[1].astype(np.float32)
            norms = np.sqrt(np.einsum("ij,ij->i", codes, codes))
            scores = (codes @ q) / np.where(norms > 0, norms, 1.0)
            best_ids = np.concatenate([best_ids, ids])
            best = np.concatenate([best, scores.astype(np.float32)])
            if len(best) > k:
                keep = np.argpartition(-best, k - 1)[:k]
                best_ids, best = best_ids[keep], best[keep]
        order = np.lexsort((best_ids, -best))[:k]
        return best_ids[order], best[order]

    def _all(self) -> Iterator[tuple[np.ndarray, list[bytes]]]:
        """(ids, stored codes) of every row, a batch at a time."""
        after = 0
        while True:
            rows = self.backend.conn.execute(
                f"SELECT id, codes FROM {self.table} WHERE id > ? ORDER BY id LIMIT ?",
                (after, _SCAN),
            )
            if not rows:
                return
            yield np.fromiter((r[0] for r in rows), np.int64, len(rows)), [r[1] for r in rows]
            after = int(rows[-1][0])

    def _rows(self, candidates: np.ndarray) -> Iterator[tuple[np.ndarray, list[bytes]]]:
        """(ids, stored codes) of the candidates that have one, a batch at a time."""
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
                yield found, [r[1] for r in rows]
