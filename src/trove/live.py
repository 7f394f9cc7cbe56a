"""A live feed of a store's events, for SSE, MCP notifications and ``trove events``.

On SQLite, changes come from the file's event log (:mod:`trove.backends.sqlite.events`),
so writes by every process sharing the file are heard, in commit order, and a write that
rolled back is never heard. Elsewhere (PostgreSQL) they come from this process's own
writes. ``retrieved`` events (reads) are logged by stores opened with
``record_retrievals`` (:func:`trove.memory.access.log_reads_to_file`), so on SQLite they
too are heard from every process; elsewhere they come from this process.

A feed sees one caller's view when given one: a namespace (plus ``global`` items) and a
session (session-scoped items of other sessions are not shown).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from trove.errors import InvalidInput
from trove.events import EVENT_KINDS
from trove.memory.access import file_event_log

if TYPE_CHECKING:
    from trove.backends.base import EventLog
    from trove.store import Store

# How often the file's log is read: a read of an index range, cheap, and the delay an
# event from another process can wait before it is seen.
POLL_SECONDS = 0.05


def event_log(store: Store) -> EventLog | None:
    """The event log in ``store``'s file, where it keeps one (SQLite), else None."""
    return file_event_log(store.backend)


class EventFeed:
    """Events from now on, filtered to ``kinds`` and to what one caller may see."""

    def __init__(
        self,
        store: Store,
        kinds: Iterable[str] = EVENT_KINDS,
        *,
        namespace: str | None = None,
        session: str | None = None,
        after: int | None = None,
    ) -> None:
        self.kinds = frozenset(kinds)
        unknown = self.kinds - set(EVENT_KINDS)
        if unknown:
            raise InvalidInput(
                f"unknown event kind {sorted(unknown)[0]!r}; use {', '.join(EVENT_KINDS)}"
            )
        self.namespace = namespace
        self.session = session
        self.log = event_log(store)
        # ``after``: resume after an event already seen (its ``seq``), if still logged.
        self.cursor = 0 if self.log is None else after if after is not None else self.log.last_id()
        self._local: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        # From the log: changes, and reads where this store logs them (log_reads).
        local = {"retrieved"} if self.log is not None else set(EVENT_KINDS)
        if self.log is not None and store.access.logs_reads:
            local = set()
        self._reads = store.access if store.access.logs_reads else None
        self._unsubscribe = store.subscribe(self._local.put, kinds=self.kinds & local)

    def close(self) -> None:
        self._unsubscribe()

    def __enter__(self) -> EventFeed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def poll(self) -> list[dict[str, Any]]:
        """The events since the last poll (may be none)."""
        found: list[dict[str, Any]] = []
        if self._reads is not None:  # this process's reads, into the log before it is read
            self._reads.flush_reads()
        if self.log is not None:
            for event in self.log.after(self.cursor):
                self.cursor = event["seq"]
                found.append(event)
        while True:
            try:
                event = self._local.get_nowait()
            except queue.Empty:
                break
            found.append({**event, "at": time.time()})
        return [e for e in found if self.visible(e)]

    def wait(self, timeout: float) -> list[dict[str, Any]]:
        """The next events, waiting up to ``timeout`` seconds for some."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.poll()
            if found or time.monotonic() >= deadline:
                return found
            time.sleep(POLL_SECONDS)

    def follow(self, idle: float = 15.0) -> Iterator[list[dict[str, Any]]]:
        """Batches of events as they come; an empty batch after ``idle`` quiet seconds."""
        while True:
            yield self.wait(idle)

    def visible(self, event: dict[str, Any]) -> bool:
        if event["kind"] not in self.kinds:
            return False
        if self.namespace is None or event["scope"] == "global":
            return True
        if event["namespace"] != self.namespace:
            return False
        return event["scope"] != "session" or event.get("session_id") == self.session
