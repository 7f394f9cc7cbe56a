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

from .. import writer
from ..errors import InvalidInput
from ..models import Document
from ..writer import WriteResult

if TYPE_CHECKING:
    from ..store import Store

MODES = ("replace", "merge", "keep")
# What a merged item takes over from the stored document: every field add() takes,
# except the session (restored from session_id) and ttl (stored as expires_at).
_KEPT = sorted(writer.ADD_FIELDS - {"session", "ttl"})


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

    def flush() -> None:
        done = writer.write_batch(store, [doc for _, doc in pending])
        for (position, _), result in zip(pending, done, strict=True):
            results[position] = result
        pending.clear()

    for item in items:
        resolved = _resolve(store, item, author_tier, on_conflict)
        results.append(resolved if isinstance(resolved, WriteResult) else None)
        if isinstance(resolved, Document):
            pending.append((len(results) - 1, resolved))
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
    # The key decides the id; merge may leave the text out, so the id is found without it.
    probe = writer.prepare({**item, "text": item.get("text", "")}, author_tier=tier)
    old = store.backend.get_document(probe.id, with_text=mode == "merge")
    if old is None or old.deleted_at is not None:
        return writer.prepare(item, author_tier=tier)
    if mode == "keep":
        return WriteResult(old.id, "unchanged")
    merged: dict[str, Any] = {name: getattr(old, name) for name in _KEPT}
    merged["session"] = old.session_id or None
    merged.update(item)
    if "ttl" in item:
        merged.pop("expires_at", None)
    return writer.prepare(merged, author_tier=tier, doc_id=old.id)


def given(record: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one add() call that differ from their defaults: what ``merge``
    changes (an argument left at its default is not "given")."""
    return {k: v for k, v in record.items() if k not in defaults or v != defaults[k]}
