"""BM25's constants, in one place for every keyword ranker.

FTS5's ``bm25()`` (fts5_aux.c) uses k1 = 1.2 and b = 0.75, and floors a negative idf
(a term in more than half the rows) at 1e-6. trove ranks with exactly that formula
wherever it computes BM25 itself: the SQLite in-memory word index
(backends/sqlite/word_index/fts.py, which must give FTS5's own scores), the PostgreSQL backend's
SQL, and the substring fallback's BM25-like score (search/ranking.py).

    score = Σ idf · tf · (K1 + 1) / (tf + K1 · (1 − B + B · length / average length))
"""

from __future__ import annotations

# Term-frequency saturation.
K1 = 1.2
# Length normalization: 0 ignores a document's length, 1 divides by it fully.
B = 0.75
# The idf of a term that more than half the rows hold (log of a number below one).
IDF_FLOOR = 1e-6
