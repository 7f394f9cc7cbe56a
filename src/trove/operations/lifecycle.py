"""A document's life after it is written: tombstone and restore, purge (expired and
deleted documents, or chosen ones), clear a namespace; and lookup by key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from trove.agent import purgeable
from trove.errors import InvalidInput, NotFound
from trove.ids import document_id
from trove.models import Document
from trove.search.filters import SCOPES
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.parts import Transacting


def delete(store: Transacting, doc_id: str) -> bool:
    """Tombstone a document; False if it was deleted already."""
    doc = store.backend.get_document(doc_id, with_text=False)
    if doc is None:
        raise NotFound(f"no document with id {doc_id!r}")
    if doc.deleted_at is not None:
        return False
    with store.transaction():
        store.backend.set_deleted(doc_id, now())
        store.backend.remove_members(None, [doc_id])  # out of its clusters
        store.notify("deleted", doc)
    return True


def restore(store: Transacting, doc_id: str) -> None:
    """Undo :func:`delete` (until a purge removes the document for good)."""
    doc = store.backend.get_document(doc_id, with_text=False)
    if doc is None:
        raise NotFound(f"no document with id {doc_id!r} (purged documents cannot return)")
    if doc.deleted_at is not None:
        store.backend.set_deleted(doc_id, None)
        store.notify("restored", doc)


def purge_spent(store: Transacting) -> int:
    """Remove every tombstoned and expired document for good, announced as ``purged``."""
    stamp = now()
    doomed = purgeable(store, stamp) if store.events.listening("purged") else {}
    purged = store.backend.purge(stamp)
    for doc_id in purged:
        store.notify("purged", doomed.get(doc_id) or Document(id=doc_id, text=""))
    return len(purged)


def purge(store: Transacting, ids: Iterable[str]) -> int:
    """Remove chosen documents for good, each announced as ``purged`` (a live one as
    ``deleted`` first, so a subscriber keeping a copy sees each step)."""
    if isinstance(ids, str):
        raise InvalidInput("purge takes a list of ids, not one string")
    wanted = list(dict.fromkeys(ids))
    if not all(isinstance(i, str) for i in wanted):
        raise InvalidInput("ids must be strings")
    return _remove(store, wanted)


def clear(store: Transacting, namespace: str) -> int:
    """Remove every document of a namespace for good, in one transaction (each announced
    as by :func:`purge`)."""
    if not isinstance(namespace, str) or not namespace:
        raise InvalidInput("clear needs the name of a namespace")
    with store.transaction():  # events, if any, only after the commit
        return _remove(store, store.backend.namespace_documents(namespace))


def _remove(store: Transacting, ids: list[str]) -> int:
    if not ids:
        return 0
    with store.transaction():
        docs = store.backend.get_documents(ids)
        removed = store.backend.remove_documents(ids)
        for doc_id in removed:
            doc = docs.get(doc_id) or Document(id=doc_id, text="")
            if doc.deleted_at is None:
                store.notify("deleted", doc)
            store.notify("purged", doc)
    return len(removed)


def key_id(
    source: str | None,
    source_id: str | None,
    dedupe_key: str | None,
    namespace: str,
    scope: str,
    session: str | None,
) -> str:
    """The id of the document a natural key names: ``(source, source_id)`` or a dedupe key
    (one of them, as a write gives them), in ``namespace`` and ``scope``."""
    if (dedupe_key is None) == (source_id is None):
        raise InvalidInput("give a dedupe_key, or a source_id (with its source)")
    if scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if scope == "session" and not session:
        raise InvalidInput("a session-scoped key needs a session")
    for name, value in (("source", source), ("source_id", source_id), ("dedupe_key", dedupe_key)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string")
    return document_id(namespace, scope, source or "", source_id, dedupe_key, "", session or "")
