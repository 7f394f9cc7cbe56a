"""The SQLite backend: one file, FTS5 for words, sqlite-vec and an in-memory index for vectors."""
