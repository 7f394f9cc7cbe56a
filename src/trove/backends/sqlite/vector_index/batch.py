"""Several queries over one vector index at once: the arithmetic that
``VectorIndex.search_many`` shares between the phrasings of one query.

Each query still picks its own rows as its search alone would (index.py); what
is shared is reading them:

- the sign sketches are compared with every query in one scan of each sketch word;
- the int8 codes of the union of the queries' candidates are converted to float32 once
  and multiplied by every query at once;
- the int16 codes of the union of the rows each query rescores are read once (a mapped
  index reads each by ``pread``, ~1 us a row; phrasings of one query share most of them).

Where this time goes (SciFact, 8,719 chunks at 384 dimensions, the query 300 deep and
three variants 50 deep, CPU time of one thread): converting every row's codes a block at
a time into one reused buffer and multiplying by all queries costs 0.8 ms, less than the
query's own int8 scan (0.9 ms); converting each block into a fresh array cost 1.8 ms
(fresh pages are faulted in at each block).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

# Multiply-adds a product OpenBLAS runs on one thread: a threaded product stalled when
# the cores were busy, and one thread is 3x einsum's speed on these shapes.
SERIAL = 262_144
# Rows converted to float32 at a time (into one buffer, reused: it stays in cache).
_BLOCK = 512


def int8_scores(codes: np.ndarray, rows: np.ndarray | None, queries: np.ndarray) -> np.ndarray:
    """Scores (len(rows), len(queries)) float32 of the int8 ``codes`` of ``rows`` (None:
    every row of ``codes``) against each query (float32, (m, dimension))."""
    size = len(codes) if rows is None else len(rows)
    dimension = codes.shape[1]
    scores = np.empty((size, len(queries)), np.float32)
    step = max(1, SERIAL // (len(queries) * dimension))
    transposed = np.ascontiguousarray(queries.T)
    buffer = np.empty((min(_BLOCK, size), dimension), np.float32)
    for start in range(0, size, _BLOCK):
        end = min(start + _BLOCK, size)
        block = buffer[: end - start]
        source = codes[start:end] if rows is None else codes[rows[start:end]]
        np.copyto(block, source, casting="unsafe")
        out = scores[start:end]
        for i in range(0, len(block), step):
            np.matmul(block[i : i + step], transposed, out=out[i : i + step])
    return scores


def read_once(
    read: Callable[[np.ndarray], np.ndarray], picked: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Each of ``picked``'s rows read by ``read`` (rows -> their codes), in its order:
    every row once, however many queries picked it."""
    if len(picked) == 1:
        return [read(picked[0])]
    union, where = np.unique(np.concatenate(picked), return_inverse=True)
    codes = read(union)
    found, start = [], 0
    for rows in picked:
        found.append(codes[where[start : start + len(rows)]])
        start += len(rows)
    return found
