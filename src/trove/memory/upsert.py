"""What a write does to a key that is already stored: ``on_conflict`` of add/add_many.

- ``replace`` (the default, and trove's behaviour before modes existed): the item becomes
  the whole record; a field it does not give is reset to its default.
- ``merge``: only the fields the item gives change; the rest of the stored record stays.
- ``keep``: a stored (not deleted) document is left untouched and reported ``unchanged``
  (an importer's "already have it").

A key that is not stored yet is created in every mode. Deleted documents count as absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from trove import write as writer
from trove.errors import InvalidInput
from trove.memory import own_vectors
from trove.models import Document
from trove.write import WriteResult

if TYPE_CHECKING:
    from trove.store import Store

MODES = ("replace", "merge", "keep")


def check(mode: str) -> str:
    if mode not in MODES:
        raise InvalidInput(f"on_conflict must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def write_many(
    store: Store,
    items: Iterable[Mapping[str, Any]],
    *,
    batch_size: int,
    author_tier: str,
    on_conflict: str,
) -> list[WriteResult]:
    """Write items in batches, resolving each against the stored record by ``on_conflict``;
    results come back in the items' order."""
    check(on_conflict)
    results: list[WriteResult | None] = []
    pending: list[tuple[int, Document]] = []
    given: dict[str, np.ndarray] = {}

    def flush() -> None:
        done = writer.write_batch(store, [doc for _, doc in pending], given)
        for (position, _), result in zip(pending, done, strict=True):
            results[position] = result
        pending.clear()
        given.clear()

    for item in items:
        vector = None
        if isinstance(item, Mapping) and item.get("vector") is not None:
            vector = own_vectors.parse(item["vector"])
            own_vectors.check(store, {"": vector})
        if isinstance(item, Mapping) and "vector" in item:
            item = {k: v for k, v in item.items() if k != "vector"}
        resolved = _resolve(store, item, author_tier, on_conflict)
        results.append(resolved if isinstance(resolved, WriteResult) else None)
        if isinstance(resolved, Document):
            pending.append((len(results) - 1, resolved))
            if vector is not None:
                given[resolved.id] = vector
            if len(pending) >= batch_size:
                flush()
    if pending:
        flush()
    return [r for r in results if r is not None]


def _resolve(
    store: Store, item: Mapping[str, Any], tier: str, mode: str
) -> Document | WriteResult:
    if mode == "replace":
        return writer.prepare(item, author_tier=tier)
    # The key decides the id; merge may leave the text out, so the id is found with a
    # stand-in (without a key the id is the content's, and the text is required anyway).
    probe = writer.prepare({**item, "text": item.get("text") or "-"}, author_tier=tier)
    old = store.backend.get_document(probe.id, with_text=mode == "merge")
    if old is None or old.deleted_at is not None:
        return writer.prepare(item, author_tier=tier)
    if mode == "keep":
        return WriteResult(old.id, "unchanged")
    merged = stored_item(old)
    merged.update(item)
    if "ttl" in item:
        merged.pop("expires_at", None)
    return writer.prepare(merged, author_tier=tier, doc_id=old.id)


def stored_item(doc: Document) -> dict[str, Any]:
    """A stored document as the arguments of the add() that would write it again."""
    # Every field add() takes, except the session (restored from session_id), ttl
    # (stored as expires_at) and index (stored as indexed).
    item = {name: getattr(doc, name) for name in writer.ADD_FIELDS - _NOT_STORED}
    item["session"] = doc.session_id or None
    item["index"] = doc.indexed
    return item


_NOT_STORED = frozenset({"session", "ttl", "index"})


def given(record: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one add() call that differ from their defaults: what ``merge``
    changes (an argument left at its default is not "given")."""
    return {k: v for k, v in record.items() if k not in defaults or v != defaults[k]}
