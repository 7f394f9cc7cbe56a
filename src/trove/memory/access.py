"""Use of memories: ``access_count`` and ``last_accessed``, recorded off the hot path;
and, for a store that keeps an event log (SQLite) and was opened with
``record_retrievals``, each read as a ``retrieved`` event in that log, as the event stream
announces it, so other processes (``trove events``, SSE, MCP) hear of it too.

A read (``get``, or a search's results) only notes the ids in memory, under a lock held
for a dictionary update; a background thread writes the counts (and logs the reads) in
one transaction about once a second, and :meth:`flush` (also called by ``Store.close``)
writes them now. Recording never fails a read: a store that cannot be written (a
read-only file, a read-only database role) drops the counts and says so once in the log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from trove.errors import TroveError
from trove.timeutil import now

if TYPE_CHECKING:
    import logging

    from trove.backends.base import Backend, EventLog
else:  # with traceback and textwrap: loaded only to report a failure
    from trove.lazy import LazyModule

    logging = LazyModule("logging")

# Seconds between background writes of the counts.
FLUSH_EVERY = 1.0


class AccessRecorder:
    """Counts reads per document and writes them in batches."""

    def __init__(self, backend: Backend, *, enabled: bool = True) -> None:
        self.backend = backend
        self.enabled = enabled
        self._pending: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._failed = False
        self._thread: threading.Thread | None = None
        # Reads to log as ``retrieved`` events (see log_reads), in the order read.
        self._log: Callable[[Sequence[str]], None] | None = None
        self._reads: list[str] = []

    def log_reads(self, append: Callable[[Sequence[str]], None]) -> None:
        """Log every ``retrieved`` event heard by :meth:`retrieved` through ``append``."""
        self._log = append

    @property
    def logs_reads(self) -> bool:
        return self._log is not None

    def note(self, doc_ids: Iterable[str]) -> None:
        """Record that these documents were handed to a caller (cheap; never blocks on I/O)."""
        if not self.enabled or self._closed:
            return
        stamp = now()
        with self._lock:
            for doc_id in doc_ids:
                count, _ = self._pending.get(doc_id, (0, stamp))
                self._pending[doc_id] = (count + 1, stamp)
            self._start()

    def retrieved(self, event: Mapping[str, Any]) -> None:
        """A ``retrieved`` event of the store's stream, to log (a store subscribes this)."""
        if self._log is None or self._closed:
            return
        with self._lock:
            self._reads.append(str(event["id"]))
            self._start()

    def _start(self) -> None:  # under self._lock
        if self._thread is None and (self._pending or self._reads):
            self._thread = threading.Thread(target=self._run, name="trove-access", daemon=True)
            self._thread.start()

    def flush(self) -> int:
        """Write the pending counts (and log the pending reads) now; returns how many
        documents the counts touched."""
        self.flush_reads()
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending or self._failed:
            return 0
        return len(pending) if self._write(self.backend.record_access, pending) else 0

    def flush_reads(self) -> None:
        """Log the pending reads now (a feed does, before it reads the log)."""
        with self._lock:
            reads, self._reads = self._reads, []
        if reads and self._log is not None and not self._failed:
            self._write(self._log, reads)

    def _write(self, write: Callable[[Any], None], what: Any) -> bool:
        try:
            write(what)
        except TroveError as exc:  # read-only file or role: reads go on, counts are dropped
            self._failed = True
            logging.getLogger("trove.access").warning("access counts are not recorded: %s", exc)
            return False
        return True

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join()
        self.flush()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(FLUSH_EVERY)
            if self._closed:
                return
            try:
                self.flush()
            except Exception:  # the store may be closing under us; never kill the process
                logging.getLogger("trove.access").exception("recording access counts failed")


def file_event_log(backend: Any) -> EventLog | None:
    """The event log in the backend's file, where it keeps one (SQLite), else None."""
    from trove.backends.base import LoggingEvents

    # Asked of the class: a closed store's stand-in answers every attribute with an error.
    if not issubclass(type(backend), LoggingEvents):
        return None
    return cast(LoggingEvents, backend).event_log()


def log_reads_to_file(
    recorder: AccessRecorder, backend: Any, subscribe: Callable[..., Any]
) -> None:
    """Have ``recorder`` write its ``retrieved`` events into the backend's file event log,
    where it has one it can write: feeds of every process then hear them, as they hear
    changes. ``subscribe`` is the store's, which hands the recorder its reads."""
    log = file_event_log(backend)
    if log is not None and log.writable:
        recorder.log_reads(log.append_retrieved)
        subscribe(recorder.retrieved, kinds=["retrieved"])
