"""Change events: subscribers hear about a write after it commits, never about a no-op."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .errors import InvalidInput
from .models import Document

EVENT_KINDS = ("written", "updated", "deleted")
log = logging.getLogger("trove.events")

Callback = Callable[[dict[str, Any]], None]


class Events:
    """A small registry of callbacks, each with the kinds of change it wants."""

    def __init__(self) -> None:
        self._subscribers: list[tuple[Callback, frozenset[str]]] = []
        self._lock = threading.Lock()

    def subscribe(
        self, callback: Callback, kinds: Iterable[str] = EVENT_KINDS
    ) -> Callable[[], None]:
        wanted = frozenset(kinds)
        unknown = wanted - set(EVENT_KINDS)
        if unknown:
            raise InvalidInput(
                f"unknown event kind {sorted(unknown)[0]!r}; use {', '.join(EVENT_KINDS)}"
            )
        entry = (callback, wanted)
        with self._lock:
            self._subscribers.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._subscribers:
                    self._subscribers.remove(entry)

        return unsubscribe

    def emit(self, kind: str, doc: Document) -> None:
        event = {
            "kind": kind,
            "id": doc.id,
            "namespace": doc.namespace,
            "scope": doc.scope,
            "importance": doc.importance,
        }
        with self._lock:
            targets = [cb for cb, kinds in self._subscribers if kind in kinds]
        for callback in targets:
            try:
                callback(dict(event))
            except Exception:  # the write has committed; a broken listener must not undo it
                log.exception("event subscriber failed on %s %s", kind, doc.id)
