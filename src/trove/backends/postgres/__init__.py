"""The PostgreSQL backend: tsvector for words, pgvector for vectors (the ``postgres`` extra)."""
