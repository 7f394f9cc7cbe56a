"""The advisory lock spaces of the PostgreSQL backend, in one place so that none is taken
twice. Each is the first key of a two-key ``pg_advisory_xact_lock``; the second is a hash
of what is locked (a schema, a document id). Delta tables take one-key locks on a hash of
their name (delta.py), which PostgreSQL keeps apart from the two-key ones."""

from __future__ import annotations

# Migrating one schema (schema.py).
MIGRATIONS = 0x54524F56
# Deciding a store's vector table and its lock (vectors.py).
VECTORS = 0x54524F57
# Deciding about one document id, inside a write (documents.py) ...
DOCUMENT = 0x54524F58
# Writing postings and term frequencies; the delete triggers name it as a literal
# (postings.py), 1414680409.
POSTINGS = 0x54524F59
# ... and about all documents of a schema: shared beside DOCUMENT locks, or exclusive
# alone (documents.py).
ALL_DOCUMENTS = 0x54524F5A
