"""The SQLite backend's vector index: vectors as int16 codes in the file, searched in memory.

- ``codes``: the stored vectors' int16 codes and their table (schema 15);
- ``searcher``: semantic retrieval, k-NN filtered inside the search, over the loaded index;
- ``cache``: the index saved beside the store file (``<store>.trove-index/``), mapped;
- ``exact``: an exact scan of the codes, the answer while no index is loaded.

The backend's vector writes and the embedder lock are ``backends/sqlite/vectors.py``, as
in the PostgreSQL backend.
"""
