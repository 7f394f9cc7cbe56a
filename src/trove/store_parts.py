"""The parts a :class:`~trove.store.Store` is made of, assembled by ``trove.open``.

:func:`trove.opening.open_store` makes them (the backend it picked, the vectorizer that
locks the store to one embedder, the change events, the recorder of reads, the search
threads, the reader-writer lock) and hands them to ``Store``, which keeps them and builds
nothing of its own: what a store is made of is read in one place, and a test or a tool
can hand a store other parts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP
from trove.events import Events
from trove.expansion_counts import CacheCounts
from trove.rwlock import ReadWriteLock

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from trove.backends.base import Backend
    from trove.embedders.vectorizer import Vectorizer
    from trove.memory.access import AccessRecorder


@dataclass
class StoreParts:
    """What a store is made of. ``chunking`` is (chunk_chars, chunk_overlap);
    ``record_retrievals``: each read is also a ``retrieved`` event."""

    backend: Backend
    vectors: Vectorizer
    access: AccessRecorder
    record_retrievals: bool = False
    chunking: tuple[int, int] = (DEFAULT_MAX_CHARS, DEFAULT_OVERLAP)
    events: Events = field(default_factory=Events)
    # Servers' request threads: reads together, a write alone (Store.reading/writing).
    lock: ReadWriteLock = field(default_factory=ReadWriteLock)
    # Hybrid searches embed and rank the query here while the keyword leg runs; kept for
    # the store's life (starting a thread per query cost milliseconds).
    pool: SearchPool = field(default_factory=lambda: SearchPool())
    expansion_counts: CacheCounts = field(default_factory=CacheCounts)


class SearchPool:
    """The threads hybrid searches embed the query in, started at the first one: a
    keyword search never imports concurrent.futures (with logging: ~25 M instructions
    of a one-shot command, python bench/coldstart.py)."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    from concurrent.futures import ThreadPoolExecutor  # see the docstring

                    self._executor = ThreadPoolExecutor(4, thread_name_prefix="trove-search")
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
