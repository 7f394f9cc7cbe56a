"""BM25 in numpy, shared by the rankers that compute it in this process: SQLite's
in-memory word index (backends/sqlite/word_index/fts.py, maxscore.py) and the PostgreSQL
backend's term cache (backends/postgres/term_cache.py).

What a term adds to a row's score, in fts5_aux.c's order of operations (so the same
floats as FTS5), and the best ``window`` rows with FTS5's tie rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trove.search.bm25 import K1

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np


def gain(idf: float, tf: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """What a term adds to each row's score: ``idf * (tf (k1 + 1) / (tf + norm))``, where
    a row's norm is ``k1 (1 - b + b len / average len)``."""
    counts = tf.astype(np.float64)
    return idf * ((counts * (K1 + 1)) / (counts + norms))


def top_window(ids: np.ndarray, values: np.ndarray, window: int) -> list[tuple[int, float]]:
    """The ``window`` best (id, score) pairs, best first, ties by lower id: every row tied
    with the last one kept is considered, then the lowest ids among them (FTS5 breaks
    ties by rowid, and so must a window's edge)."""
    if window < len(values):
        cut = values[np.argpartition(-values, window - 1)[window - 1]]
        top = np.flatnonzero(values >= cut)
    else:
        top = np.arange(len(values))
    order = top[np.lexsort((ids[top], -values[top]))][:window]
    # tolist(): Python ints and floats of the same values, without a call per row.
    return list(zip(ids[order].tolist(), values[order].tolist(), strict=True))
