"""Opening a store: options checked before anything is created, nothing left by a failure.

``trove.open`` calls :func:`open_store`. A read-only caller passes ``create=False`` and
gets a clear error for a missing file instead of a new empty store; a failed open (an
unknown embedder, a bad option) removes the file it created; a closed store answers
every call with :class:`~trove.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any, NoReturn

from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP
from trove.errors import InvalidInput, StoreError

# The chunker's own lower bound (ingest.chunking.chunk_text).
MIN_CHUNK_CHARS = 20


def check_options(options: dict[str, Any]) -> None:
    """Refuse unknown or out-of-range options before a file exists."""
    known = accepted_options()
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidInput(
            f"unknown option {', '.join(unknown)}; trove.open takes: {', '.join(sorted(known))}"
        )
    chars = options.get("chunk_chars", DEFAULT_MAX_CHARS)
    overlap = options.get("chunk_overlap", DEFAULT_OVERLAP)
    if not _is_int(chars) or chars < MIN_CHUNK_CHARS:
        raise InvalidInput(f"chunk_chars must be an integer of at least {MIN_CHUNK_CHARS}")
    if not _is_int(overlap) or not 0 <= overlap < chars:
        raise InvalidInput("chunk_overlap must be an integer from 0 to below chunk_chars")
    weight = options.get("keyword_weight")
    if weight is not None and (
        isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1
    ):
        raise InvalidInput("keyword_weight must be a number from 0 to 1")
    busy = options.get("busy_timeout_ms", 5000)
    if not _is_int(busy) or busy < 0:
        raise InvalidInput("busy_timeout_ms must be a non-negative integer")
    replicas = options.get("replicas", ())
    if isinstance(replicas, str) or not isinstance(replicas, list | tuple):
        raise InvalidInput("replicas must be a list of postgresql:// URLs")
    if not all(isinstance(url, str) for url in replicas):
        raise InvalidInput("replicas must be a list of postgresql:// URLs")


def accepted_options() -> frozenset[str]:
    """What trove.open accepts besides the target: Store's keyword arguments (read from its
    signature, so a new Store option needs no second list here) and the backend's."""
    import inspect

    from trove.store import Store

    parameters = inspect.signature(Store.__init__).parameters
    store_options = {p.name for p in parameters.values() if p.kind is p.KEYWORD_ONLY}
    return frozenset(store_options | {"busy_timeout_ms", "replicas"})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def sqlite_files(path: str) -> list[str]:
    return [path + suffix for suffix in ("", "-wal", "-shm")]


def require_existing(path: str) -> None:
    """For ``create=False``: a missing store file is an error naming the path."""
    if not os.path.exists(path):
        raise StoreError(
            f"no store at {path}: check the path (or --db), or create one by adding to it"
        )


def remove_created(path: str, existed: bool) -> None:
    """After a failed open: remove the file this open created (never an existing one)."""
    if existed or path == ":memory:":
        return
    for file in sqlite_files(path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(file)


class ClosedBackend:
    """Stands in for a closed store's backend: every use is a clear StoreError."""

    def __getattr__(self, name: str) -> Callable[..., NoReturn]:
        raise StoreError("this store is closed; open it again with trove.open()")

    def close(self) -> None:
        """Closing twice is harmless."""


def is_new_file(target: str) -> bool:
    return target != ":memory:" and not os.path.exists(target)
