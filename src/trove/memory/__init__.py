"""Agent-memory rules above the backend: upsert modes, atomic groups of writes, hard delete."""
