"""Atomic groups of writes: ``with kb.transaction(): ...``.

Every write inside the block joins one backend transaction (the backends' transactions
nest), so the group commits whole or not at all. Change events are held back until the
commit and dropped on a rollback: a subscriber never hears of a write that did not happen.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from trove.models import Document

if TYPE_CHECKING:
    from trove.parts import Transacting

# Per thread, per store: the events of the transaction this thread has open on that store.
_local = threading.local()


def _open() -> dict[int, list[tuple[str, Document]]]:
    held: dict[int, list[tuple[str, Document]]] | None = getattr(_local, "held", None)
    if held is None:
        held = _local.held = {}
    return held


@contextlib.contextmanager
def transaction(store: Transacting) -> Iterator[None]:
    """One transaction around the block; nested blocks join the outer one."""
    held = _open()
    if id(store) in held:
        yield
        return
    held[id(store)] = []
    try:
        # The backend tells its in-memory indexes on commit, not on a rollback.
        with store.backend.transaction():
            yield
    finally:
        events = held.pop(id(store))
    for kind, doc in events:
        store.events.emit(kind, doc)


def active(store: Transacting) -> bool:
    """Whether this thread has a transaction open on ``store``."""
    return id(store) in _open()


def defer(store: Transacting, kind: str, doc: Document) -> bool:
    """Hold an event back if this thread has a transaction open on ``store``."""
    events = _open().get(id(store))
    if events is None:
        return False
    events.append((kind, doc))
    return True
