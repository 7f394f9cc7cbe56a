"""What a write does to a key that is already stored: ``on_conflict`` of add/add_many.

- ``replace`` (the default, and trove's behaviour before modes existed): the item becomes
  the whole record; a field it does not give is reset to its default.
- ``merge``: only the fields the item gives change; the rest of the stored record stays.
- ``keep``: a stored (not deleted) document is left untouched and reported ``unchanged``
  (an importer's "already have it").

A key that is not stored yet is created in every mode. Deleted documents count as absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from trove.backends.writes import ChunkRow
from trove.errors import InvalidInput
from trove.memory import entry
from trove.models import Document
from trove.operations import own_vectors
from trove.operations.chunk_spans import given_chunks
from trove.write import ADD_FIELDS, Writer, WriteResult

MODES = ("replace", "merge", "keep")
# What Store.update may change.
UPDATABLE = frozenset(
    {"text", "title", "tags", "metadata", "importance", "expires_at", "ttl", *entry.FIELDS}
)


# What an item brings beside its fields, to the write rather than the document: its own
# vector (trove.operations.own_vectors) and the chunks it was cut into (write.given_chunks).
_RIDING = frozenset({"vector", "chunks"})


class Prepared(dict[str, Any]):
    """An item together with the document :func:`trove.write.prepare` made of it (with
    the author tier it is written with), so that resolving it does not validate and hash
    it again. The item's text is given (preparing it needed one), so the document's id is
    the item's key, in every mode."""

    def __init__(self, item: Mapping[str, Any], doc: Document) -> None:
        super().__init__(item)
        self.doc = doc


def check(mode: str) -> str:
    if mode not in MODES:
        raise InvalidInput(f"on_conflict must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def write_many(
    writer: Writer,
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
    # The batch's vectors (every item's, a kept one's too), checked and normalized at
    # once at the flush, before anything of the batch is written.
    vectors = own_vectors.Batch(writer.backend, writer.vectorizer)

    cut: dict[str, list[ChunkRow]] = {}  # the chunks callers cut documents into

    def flush() -> None:
        given = vectors.given() if len(vectors) else None
        done = writer.write([doc for _, doc in pending], given, cut) if pending else []
        cut.clear()
        for (position, _), result in zip(pending, done, strict=True):
            results[position] = result
        pending.clear()
        vectors.clear()

    for item in items:
        row = (
            vectors.take(item["vector"])
            if isinstance(item, Mapping) and item.get("vector") is not None
            else None
        )
        spans = item.get("chunks") if isinstance(item, Mapping) else None
        if isinstance(item, Mapping) and not _RIDING.isdisjoint(item):
            item = {k: v for k, v in item.items() if k not in _RIDING}
        resolved = _resolve(writer, item, author_tier, on_conflict)
        results.append(resolved if isinstance(resolved, WriteResult) else None)
        if isinstance(resolved, Document):
            if spans is not None:
                cut[resolved.id] = given_chunks(resolved, spans)
            pending.append((len(results) - 1, resolved))
            if row is not None:
                vectors.place(resolved.id, row)
        if len(pending) >= batch_size or len(vectors) >= batch_size:
            flush()
    if pending or len(vectors):
        flush()
    return [r for r in results if r is not None]


def empty(item: Any) -> bool:
    """Whether an item holds nothing to store: no text and no title (blank or absent),
    and it is not a payload-only entry (whose metadata is what it stores)."""
    if not isinstance(item, Mapping) or entry.payload_only(item):
        return False
    return all(
        item.get(name) is None or (isinstance(item[name], str) and not item[name].strip())
        for name in ("text", "title")
    )


def skipping_empty(items: Iterable[Any], skipped: list[str]) -> Iterator[Any]:
    """``items`` without the :func:`empty` ones, each named in ``skipped`` (by its key, else
    its position) as the iteration passes it."""
    for position, item in enumerate(items):
        if empty(item):
            key = item.get("source_id") or item.get("dedupe_key")
            skipped.append(str(key) if key else f"item {position}")
        else:
            yield item


def _resolve(
    writer: Writer, item: Mapping[str, Any], tier: str, mode: str
) -> Document | WriteResult:
    done = item.doc if isinstance(item, Prepared) else None
    if mode == "replace":
        return done or writer.prepare(item, author_tier=tier)
    # The key decides the id; merge may leave the text out, so the id is found with a
    # stand-in (without a key the id is the content's, and the text is required anyway).
    probe = done or writer.prepare({**item, "text": item.get("text") or "-"}, author_tier=tier)
    old = writer.backend.get_document(probe.id, with_text=mode == "merge")
    if old is None or old.deleted_at is not None:
        return done or writer.prepare(item, author_tier=tier)
    if mode == "keep":
        return WriteResult(old.id, "unchanged")
    return writer.prepare(changed(old, item), author_tier=tier, doc_id=old.id)


def check_updatable(changes: Mapping[str, Any]) -> None:
    """Refuse a change :meth:`Store.update` cannot make (the key, scope, provenance)."""
    fixed = set(changes) - UPDATABLE
    if fixed:
        raise InvalidInput(
            f"update cannot change {', '.join(sorted(fixed))}; "
            f"it changes {', '.join(sorted(UPDATABLE))}"
        )


def changed(old: Document, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The stored record with ``changes`` applied, as the item that writes it."""
    item = stored_item(old)
    item.update(changes)
    if "ttl" in changes:
        item.pop("expires_at", None)
    return item


def stored_item(doc: Document) -> dict[str, Any]:
    """A stored document as the arguments of the add() that would write it again."""
    # Every field add() takes, except the session (restored from session_id), ttl
    # (stored as expires_at) and index (stored as indexed).
    item = {name: getattr(doc, name) for name in ADD_FIELDS - _NOT_STORED}
    item["session"] = doc.session_id or None
    item["index"] = doc.indexed
    return item


_NOT_STORED = frozenset({"session", "ttl", "index"})


def given(record: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one add() call that differ from their defaults: what ``merge``
    changes (an argument left at its default is not "given")."""
    return {k: v for k, v in record.items() if k not in defaults or v != defaults[k]}
