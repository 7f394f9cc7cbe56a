"""Opening a store: options checked before anything is created, nothing left by a failure.

``trove.open`` calls :func:`open_store`, which picks the backend from the target (the
only module above the backends that names a concrete one), assembles the store's parts
around it (:func:`assemble`) and hands them to ``Store``. A read-only caller passes
``create=False`` and gets a clear error for a missing file instead of a new empty
store; a failed open (an unknown embedder, a bad option) removes the file it created; a
closed store answers every call with :class:`~trove.errors.StoreError`
(:class:`~trove.backends.closed.ClosedBackend`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

# Whether a target names PostgreSQL, and how to show it (its password hidden): asked by
# every command that prints a target, which need not know the backend packages.
from trove.backends.postgres.scheme import is_postgres as is_postgres
from trove.backends.postgres.scheme import redact as redact
from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP
from trove.errors import InvalidInput, StoreError

if TYPE_CHECKING:
    from trove.backends.base import Backend
    from trove.embedders.vectorizer import EmbedderSpec
    from trove.store import Store
    from trove.store_parts import StoreParts

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


def open_store(target: str | os.PathLike[str], *, create: bool = True, **options: Any) -> Store:
    """``trove.open``: the options checked, the backend chosen, the store assembled."""
    check_options(options)
    busy = options.pop("busy_timeout_ms", 5000)
    replicas = options.pop("replicas", ())
    path = os.fspath(target)
    if is_postgres(path):
        # Imported only here: the core never needs psycopg (the ``postgres`` extra).
        from trove.backends.postgres.backend import PostgresBackend

        return _with(PostgresBackend(path, replicas=replicas), options)
    if replicas:
        raise InvalidInput("replicas are PostgreSQL standbys; a SQLite store takes none")
    from trove.backends.sqlite.backend import SQLiteBackend

    new = is_new_file(path)
    if new and not create:
        require_existing(path)
    try:
        backend = SQLiteBackend(path, busy_timeout_ms=busy)
    except BaseException:
        remove_created(path, existed=not new)
        raise
    try:
        store = _with(backend, options)
        if new and options.get("embedder", "auto") is None:
            store.vectors.mark_keyword_only()  # made keyword-only: recorded in the file
        return store
    except BaseException:
        remove_created(path, existed=not new)
        raise


def _with(backend: Any, options: dict[str, Any]) -> Store:
    from trove.store import Store

    assembling = _keywords(assemble)
    try:
        parts = assemble(backend, **{k: v for k, v in options.items() if k in assembling})
        return Store(parts, **{k: v for k, v in options.items() if k not in assembling})
    except BaseException:
        backend.close()
        raise


def assemble(
    backend: Backend,
    *,
    embedder: EmbedderSpec = "auto",
    default_embedder: str = "default",
    chunk_chars: int = DEFAULT_MAX_CHARS,
    chunk_overlap: int = DEFAULT_OVERLAP,
    record_retrievals: bool | None = None,
    record_access: bool = True,
) -> StoreParts:
    """The parts of a store over ``backend``: the vectorizer that locks it to one embedder
    (``embedder``, or the store's own, or ``default_embedder``), the chunking, the
    recorder of reads (``record_access``: access counts; ``record_retrievals``: each read
    a ``retrieved`` event, into the file's event log where there is one; None: as
    $TROVE_RECORD_RETRIEVALS says, for servers), with fresh events, lock and threads."""
    from trove.embedders.vectorizer import Vectorizer
    from trove.memory.access import AccessRecorder, log_reads_to_file
    from trove.store_parts import StoreParts

    if record_retrievals is None:  # servers: set in the environment they run in
        record_retrievals = os.environ.get("TROVE_RECORD_RETRIEVALS", "") in ("1", "true")
    parts = StoreParts(
        backend=backend,
        vectors=Vectorizer(backend, embedder, default_embedder),
        access=AccessRecorder(backend, enabled=record_access),
        record_retrievals=record_retrievals,
        chunking=(chunk_chars, chunk_overlap),
    )
    if record_retrievals:  # most hosts do not audit reads: only when asked
        log_reads_to_file(parts.access, backend, parts.events.subscribe)
    return parts


def accepted_options() -> frozenset[str]:
    """What trove.open accepts besides the target: the keyword arguments of :func:`assemble`
    and of Store (read from their signatures, so a new option needs no second list here)
    and the backend's."""
    from trove.store import Store

    store_options = _keywords(assemble) | _keywords(Store.__init__)
    return frozenset(store_options | {"busy_timeout_ms", "replicas"})


def _keywords(function: Any) -> set[str]:
    import inspect

    parameters = inspect.signature(function).parameters
    return {p.name for p in parameters.values() if p.kind is p.KEYWORD_ONLY}


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


def is_new_file(target: str) -> bool:
    return target != ":memory:" and not os.path.exists(target)
