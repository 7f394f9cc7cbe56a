"""Change events: subscribers hear about a write after it commits, never about a no-op.

Kinds: ``written`` (new), ``updated``, ``deleted`` (tombstoned), ``restored``, ``purged``
(gone for good), and ``retrieved`` (a search or get returned it; only from stores opened
with ``record_retrievals=True``). Every payload has ``kind``, ``id``, ``namespace``,
``scope``, ``session_id``, ``source``, ``doc_type`` and ``importance``. Events from other
processes writing the same file come through :mod:`trove.live`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from trove.errors import InvalidInput
from trove.event_kinds import EVENT_KINDS

if TYPE_CHECKING:
    import logging
else:  # with traceback and textwrap: loaded only when a subscriber fails
    from trove.lazy import LazyModule

    logging = LazyModule("logging")

if TYPE_CHECKING:  # only types
    from trove.hits import Hit
    from trove.models import Document


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

    def listening(self, kind: str) -> bool:
        with self._lock:
            return any(kind in kinds for _, kinds in self._subscribers)

    def emit(self, kind: str, doc: Document) -> None:
        self.send(payload(kind, doc, doc.id, doc.session_id))

    def emit_hit(self, kind: str, hit: Hit) -> None:
        self.send(payload(kind, hit, hit.doc_id, ""))

    def send(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        with self._lock:
            targets = [cb for cb, kinds in self._subscribers if kind in kinds]
        for callback in targets:
            try:
                callback(dict(event))
            except Exception:  # the write has committed; a broken listener must not undo it
                logging.getLogger("trove.events").exception(
                    "event subscriber failed on %s %s", kind, event["id"]
                )


def payload(kind: str, item: Document | Hit, doc_id: str, session_id: str) -> dict[str, Any]:
    """The event for ``item`` (a document or a search hit) with ``doc_id``."""
    return {
        "kind": kind,
        "id": doc_id,
        "namespace": item.namespace,
        "scope": item.scope,
        "session_id": session_id,
        "source": item.source,
        "doc_type": item.doc_type,
        "importance": item.importance,
    }
