"""trove: a local-first knowledge store for people and AI agents.

>>> import trove
>>> with trove.open(":memory:") as kb:
...     doc_id = kb.add("Redis was dropped for SQLite.", title="Decision")
...     [hit.title for hit in kb.search("redis")]
['Decision']
"""

from __future__ import annotations

import os
from typing import Any

from .errors import (
    CorruptStore,
    EmbedderError,
    EmbedderMismatch,
    Forbidden,
    InvalidInput,
    InvalidQuery,
    MissingDependency,
    NotATroveStore,
    NotFound,
    QueryTimeout,
    SchemaTooNew,
    StoreError,
    TroveError,
)
from .evaluate import EvalRun, evaluate, evaluate_pairs
from .models import Chunk, Document, Edge, Hit, Page, Stats
from .store import Store
from .workspace import Workspace
from .writer import WriteResult

__version__ = "0.1.0"


def open(target: str | os.PathLike[str], **options: Any) -> Store:
    """Open (or create) a store: a file path, ``":memory:"``, or a PostgreSQL URL
    (``postgresql://user@host/db?schema=NAME``; needs the ``postgres`` extra).

    Options: ``embedder`` (``"auto"``: the file's own, else ``default_embedder``; a
    name, an :class:`~trove.embedders.Embedder`, or None for keyword only),
    ``default_embedder`` (``"default"``), ``fusion``,
    ``keyword_weight``, ``chunk_chars``, ``chunk_overlap``, ``author_tier``,
    ``busy_timeout_ms``.
    """
    from .backends.base import Backend
    from .backends.postgres_url import is_postgres

    busy = options.pop("busy_timeout_ms", 5000)
    backend: Backend
    if is_postgres(os.fspath(target)):
        # Imported only here: the core never needs psycopg (the ``postgres`` extra).
        from .backends.postgres import PostgresBackend

        backend = PostgresBackend(os.fspath(target))
    else:
        from .backends.sqlite import SQLiteBackend

        backend = SQLiteBackend(os.fspath(target), busy_timeout_ms=busy)
    try:
        return Store(backend, **options)
    except BaseException:
        backend.close()
        raise


__all__ = [
    "Chunk",
    "CorruptStore",
    "Document",
    "Edge",
    "EmbedderError",
    "EmbedderMismatch",
    "EvalRun",
    "Forbidden",
    "Hit",
    "InvalidInput",
    "InvalidQuery",
    "MissingDependency",
    "NotATroveStore",
    "NotFound",
    "Page",
    "QueryTimeout",
    "SchemaTooNew",
    "Stats",
    "Store",
    "StoreError",
    "TroveError",
    "Workspace",
    "WriteResult",
    "evaluate",
    "evaluate_pairs",
    "open",
]
