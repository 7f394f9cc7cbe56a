"""Exact k-NN over the stored vectors: the answer while the fast index is not loaded.

A process that has not loaded the vector index (a one-shot CLI command, a fresh MCP
server) scores every stored vector (or each candidate of a filtered search) against the
query in numpy, a batch of rows at a time: far quicker than loading the index, which
takes seconds at 100k chunks. The stored vectors are int16 codes (codes.py), so
its scores are within ~1e-5 of float32's cosine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from trove.backends.sqlite.vector_index.batch import SERIAL
from trove.backends.sqlite.vector_index.codes import views

if TYPE_CHECKING:
    from trove.backends.sqlite.parts import SQLiteParts

_BATCH = 5_000  # candidate ids a statement: point look-ups, ~20 µs each
_SCAN = 20_000  # rows a statement in a scan of every row: bounds temporary memory
_BLOCK = 256  # rows converted to float32 and scored at a time (fits in a core's cache)


class ExactScan:
    """The search interface of :class:`VectorIndex`, answered from the stored vectors."""

    def __init__(self, backend: SQLiteParts, table: str) -> None:
        self.backend = backend
        self.table = table

    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.search_many(np.asarray(query, np.float32).reshape(1, -1), [k], candidates)[0]

    def search_many(
        self, queries: np.ndarray, ks: Sequence[int], candidates: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The ``ks[i]`` nearest of each of ``queries``, every stored row read once for
        all of them."""
        q = np.ascontiguousarray(queries, np.float32).reshape(len(ks), -1)
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
        best = [(np.zeros(0, np.int64), np.zeros(0, np.float32)) for _ in ks]
        if max(ks, default=0) <= 0:
            return best
        rows = self._all() if candidates is None else self._rows(candidates)
        for ids, blobs in rows:
            scores = _scores(blobs, q)
            for i, k in enumerate(ks):
                best[i] = _kept(best[i], ids, scores[:, i], k)
        return [_ordered(found, k) for found, k in zip(best, ks, strict=True)]

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


def _scores(blobs: list[bytes], queries: np.ndarray) -> np.ndarray:
    """Cosine (len(blobs), len(queries)) float32 of stored rows with unit ``queries``,
    from the codes themselves (a row's scale cancels out). A few hundred rows at a time
    are joined, converted into one reused buffer and multiplied (in products OpenBLAS runs
    on one thread: batch.SERIAL): converting a whole batch at once faulted in fresh
    pages for every copy, a third of a scan's time at 100k rows."""
    scores = np.empty((len(blobs), len(queries)), np.float32)
    transposed = np.ascontiguousarray(queries.T)
    step = max(1, SERIAL // transposed.size)
    buffer = np.empty((0, 0), np.float32)
    for start in range(0, len(blobs), _BLOCK):
        codes = views(blobs[start : start + _BLOCK])[1]
        if buffer.shape[1] != codes.shape[1]:
            buffer = np.empty((_BLOCK, codes.shape[1]), np.float32)
        block, out = buffer[: len(codes)], scores[start : start + len(codes)]
        np.copyto(block, codes, casting="unsafe")
        for at in range(0, len(block), step):
            np.matmul(block[at : at + step], transposed, out=out[at : at + step])
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        out /= np.where(norms > 0, norms, 1.0)[:, None]
    return scores


def _kept(
    best: tuple[np.ndarray, np.ndarray], ids: np.ndarray, scores: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k best of ``best`` and one more batch of rows (in no order)."""
    if k <= 0:
        return best
    best_ids, best_scores = np.concatenate([best[0], ids]), np.concatenate([best[1], scores])
    if len(best_scores) > k:
        keep = np.argpartition(-best_scores, k - 1)[:k]
        best_ids, best_scores = best_ids[keep], best_scores[keep]
    return best_ids, best_scores


def _ordered(best: tuple[np.ndarray, np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((best[0], -best[1]))[: max(k, 0)]
    return best[0][order], best[1][order]
