"""Parsing files, in this process or in a pool of worker processes.

Markdown and text cost less to parse than to hand to another process, so they are read
inline; HTML, PDF and mail are CPU-bound and go to worker processes when there are
enough of them to repay the pool's start-up and a core is free for it (bench/ingest.py
--formats measures both ways; on 2 shared cores, inline won).
Results come back in submission order, with a bounded number in flight, so memory is
bounded and the report is the same on every run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from trove.errors import MissingDependency
from trove.ingest.readers import BY_NAME, Corrupt, ReadOptions, Record, RecordError, Unreadable

# Fewer heavy files than this are parsed inline: spawned workers are slow to start (each
# imports trove and the format's library), as slow as parsing many PDFs.
POOL_MIN_FILES = 100
T = TypeVar("T")


@dataclass
class Parsed:
    """What a reader made of one file: records, or why there are none."""

    records: list[Record | RecordError] = field(default_factory=list)
    # ("skipped" | "failed", reason) when the whole file could not be used.
    problem: tuple[str, str] | None = None


def parse(format_name: str, rel: str, data: bytes, options: ReadOptions) -> Parsed:
    """Run a whole-file reader; never raises (so it is safe in a worker process)."""
    reader = BY_NAME[format_name].read
    assert reader is not None
    try:
        return Parsed(list(reader(rel, data, options)))
    except Corrupt as exc:
        return Parsed(problem=("failed", str(exc)))
    except (Unreadable, MissingDependency) as exc:
        return Parsed(problem=("skipped", str(exc)))
    except Exception as exc:  # a reader library's own bug must not stop the run
        return Parsed(problem=("failed", f"{type(exc).__name__}: {exc}"))


def default_workers() -> int:
    """One worker per core but one: the main process reads, hashes and writes meanwhile.
    On 2 cores that is no pool at all, which is what measured fastest there."""
    return max(1, min(8, (os.cpu_count() or 1) - 1))


class Parser(Generic[T]):
    """Parses jobs in order; heavy ones in worker processes once enough are queued.

    ``tag`` travels with each job and comes back with its result.
    """

    def __init__(self, workers: int, heavy_files: int) -> None:
        self.workers = workers
        self.heavy_left = heavy_files
        self.pool: ProcessPoolExecutor | None = None
        self.pending: deque[tuple[T, Future[Parsed]]] = deque()

    def submit(
        self, tag: T, format_name: str, rel: str, data: bytes, options: ReadOptions
    ) -> None:
        """Queue one file (heavy formats go to the pool once it pays)."""
        heavy = BY_NAME[format_name].heavy
        if heavy:
            self.heavy_left -= 1
        pool = self._pool() if heavy else None
        if pool is not None:
            future = pool.submit(parse, format_name, rel, data, options)
        else:
            future = Future()
            future.set_result(parse(format_name, rel, data, options))
        self.pending.append((tag, future))

    def ready(self) -> Iterator[tuple[T, Parsed]]:
        """The finished results at the head of the queue, oldest first; waits while more
        than a few jobs per worker are in flight, so memory stays bounded."""
        limit = 4 * self.workers
        while self.pending and (len(self.pending) > limit or self.pending[0][1].done()):
            tag_done, done = self.pending.popleft()
            yield tag_done, done.result()

    def drain(self) -> Iterator[tuple[T, Parsed]]:
        """Every queued result, oldest first."""
        while self.pending:
            tag, future = self.pending.popleft()
            yield tag, future.result()

    def _pool(self) -> ProcessPoolExecutor | None:
        if self.pool is None and self.workers > 1 and self.heavy_left + 1 >= POOL_MIN_FILES:
            # spawn, not fork: the parent holds a SQLite connection and maybe model threads.
            self.pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_ignore_interrupts,
            )
        return self.pool

    def close(self, *, cancel: bool = False) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=not cancel, cancel_futures=cancel)
            self.pool = None
        self.pending.clear()


def _ignore_interrupts(*_: Any) -> None:
    # Ctrl-C reaches the whole process group; only the parent decides what to do.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
