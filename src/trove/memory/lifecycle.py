"""Hard deletion and lookup by key: purge chosen documents, clear a namespace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from trove.errors import InvalidInput
from trove.ids import document_id
from trove.models import Document
from trove.search.filters import SCOPES

if TYPE_CHECKING:
    from trove.store import Store


def purge(store: Store, ids: Iterable[str]) -> int:
    """Remove chosen documents for good; live ones are announced as ``deleted``."""
    if isinstance(ids, str):
        raise InvalidInput("purge takes a list of ids, not one string")
    wanted = list(dict.fromkeys(ids))
    if not all(isinstance(i, str) for i in wanted):
        raise InvalidInput("ids must be strings")
    return _remove(store, wanted)


def clear(store: Store, namespace: str) -> int:
    """Remove every document of a namespace for good, in one transaction."""
    if not isinstance(namespace, str) or not namespace:
        raise InvalidInput("clear needs the name of a namespace")
    with store.transaction():  # events, if any, only after the commit
        return _remove(store, store.backend.namespace_documents(namespace))


def _remove(store: Store, ids: list[str]) -> int:
    if not ids:
        return 0
    with store.transaction():
        docs = store.backend.get_documents(ids)
        removed = store.backend.remove_documents(ids)
        for doc_id in removed:
            doc = docs.get(doc_id)
            if doc is not None and doc.deleted_at is None:
                store.notify("deleted", doc)
    return len(removed)


def get_by_key(
    store: Store,
    source: str,
    source_id: str,
    namespace: str,
    scope: str,
    session: str | None,
) -> Document | None:
    if scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if scope == "session" and not session:
        raise InvalidInput("a session-scoped key needs a session")
    doc_id = document_id(namespace, scope, source, str(source_id), None, "", session or "")
    return store.get(doc_id)
