"""trove: a local-first knowledge store for people and AI agents.

>>> import trove
>>> with trove.open(":memory:") as kb:
...     doc_id = kb.add("Redis was dropped for SQLite.", title="Decision")
...     [hit.title for hit in kb.search("redis")]
['Decision']
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from trove.errors import (
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

if TYPE_CHECKING:
    from trove.hits import Hit
    from trove.models import Chunk, Document, Edge, Page, Stats
    from trove.store import Store
    from trove.tools.evaluate import EvalRun, evaluate
    from trove.tools.pairs import evaluate_pairs
    from trove.workspace import Workspace
    from trove.write import WriteResult

# Public names imported when first used: ``import trove`` stays cheap (no numpy, no
# store), so a CLI command, an MCP server or a script starts fast (python bench/coldstart.py).
_LAZY = {
    "EvalRun": "tools.evaluate",
    "evaluate": "tools.evaluate",
    "evaluate_pairs": "tools.pairs",
    "Chunk": "models",
    "Document": "models",
    "Edge": "models",
    "Hit": "hits",
    "Page": "models",
    "Stats": "models",
    "Store": "store",
    "Workspace": "workspace",
    "WriteResult": "write",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trove' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


__version__ = "0.1.0"


def open(target: str | os.PathLike[str], *, create: bool = True, **options: Any) -> Store:
    """Open (or create) a store: a file path, ``":memory:"``, or a PostgreSQL URL
    (``postgresql://user@host/db?schema=NAME``; needs the ``postgres`` extra).

    ``create=False`` refuses a missing file (``StoreError`` naming it) instead of
    creating an empty store. Options: ``embedder`` (``"auto"``: the file's own, else
    ``default_embedder``; a name, an :class:`~trove.embedders.Embedder`, or None for
    keyword only), ``default_embedder`` (``"default"``), ``fusion``,
    ``keyword_weight``, ``chunk_chars``, ``chunk_overlap``, ``author_tier``,
    ``busy_timeout_ms``, ``replicas`` (PostgreSQL standby URLs that serve reads: see
    docs/postgres.md), ``llm`` (a :class:`~trove.llm.ChatModel`, ``"openai:MODEL"``, or
    None; default ``$TROVE_LLM``), ``record_retrievals`` (``retrieved`` events for every
    search and get; default ``$TROVE_RECORD_RETRIEVALS``). They are checked before
    anything is created, and an open that fails leaves no file behind.
    """
    from trove.opening import open_store

    return open_store(target, create=create, **options)


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
