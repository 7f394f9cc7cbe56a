"""The SQLite backend's word index: FTS5 in the file, and the same postings in memory.

- ``fts``: every FTS5 expression trove runs, and :class:`WordIndex`, FTS5's BM25 over
  postings held in numpy arrays (the same scores, without FTS5's scan);
- ``searcher``: the in-memory index of one store, built or loaded, kept in step with the
  file's commits;
- ``cache``: that index saved beside the store file (``<store>.trove-index/``), mapped;
- ``maxscore``: the top k by MaxScore, for a large index.

The backend's keyword search itself (filters, the best chunk per document) is
``backends/sqlite/search.py``, as in the PostgreSQL backend.
"""
