"""The vector lock, the same for both backends: which embedder made a store's vectors and
which table holds them, kept in ``meta``.

Vectors sit in a table per generation (``chunk_vec_1``, ``chunk_vec_2`` ...): a rebuild
fills a new table beside the old one and switches the lock in one transaction, so a crash
midway leaves the old vectors in use.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from trove.backends.base import EmbedderLock
from trove.errors import EmbedderMismatch

LOCK_KEY = "embedder"


def read_lock(value: str | None) -> EmbedderLock | None:
    """The lock as ``meta`` holds it (None: no vectors yet)."""
    return None if value is None else EmbedderLock(**json.loads(value))


def written_lock(lock: EmbedderLock) -> str:
    return json.dumps(lock.to_dict())


def same_embedder(existing: EmbedderLock, model_id: str, dimension: int) -> EmbedderLock:
    """The lock another writer just took, if its embedder is this one; else refused."""
    if (existing.model_id, existing.dimension) != (model_id, dimension):
        raise EmbedderMismatch(
            f"this store's vectors were just locked to {existing.model_id} "
            f"({existing.dimension}-d) by another writer, not {model_id}"
        )
    return existing


def next_table(tables: Iterable[str], lock: EmbedderLock | None) -> str:
    """The name of a new generation: past every table there is and the locked one."""
    numbers = [int(name.rsplit("_", 1)[1]) for name in tables]
    if lock is not None:
        numbers.append(int(lock.table.rsplit("_", 1)[1]))
    return f"chunk_vec_{max(numbers, default=0) + 1}"
