"""The store's write half: the methods of :class:`~trove.store.Store` that change what it
holds, in :class:`StoreWrites`, which ``Store`` inherits (the façade's own module keeps
its reads, searches and lifecycle; this one holds the bodies of its writes): each
checks its arguments and hands over to the write path (:class:`trove.write.Writer`,
through :mod:`trove.operations.upsert`), to :mod:`trove.operations.lifecycle` or to the
vectorizer.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from trove.backends.base import WriteLog
from trove.embedders.vectorizer import AUTO, EmbedderSpec
from trove.errors import NotFound
from trove.timeutil import TimeLike

if TYPE_CHECKING:
    from trove import enrich as enrichment
    from trove import originals
    from trove.ingest import ownership
    from trove.operations import lifecycle, transactions, upsert
    from trove.parts import WithBackend, Writing
    from trove.write import WriteResult
else:  # loaded at the first write: a store opened to read or count needs none of them
    from trove.lazy import LazyModule

    enrichment = LazyModule("trove.enrich")
    originals = LazyModule("trove.originals")
    ownership = LazyModule("trove.ingest.ownership")
    lifecycle = LazyModule("trove.operations.lifecycle")
    transactions = LazyModule("trove.operations.transactions")
    upsert = LazyModule("trove.operations.upsert")

_log = logging.getLogger("trove")


class StoreWrites:
    """The store's write half, which :class:`~trove.store.Store` inherits. Each method
    is typed with what it uses of the store (:class:`trove.parts.Writing`), so this
    module names no Store."""

    def add(
        self: Writing,
        text: str,
        *,
        source: str = "",
        source_id: str | None = None,
        doc_type: str = "",
        title: str = "",
        author: str = "",
        participants: Iterable[str] = (),
        timestamp: TimeLike | None = None,
        url: str = "",
        thread_id: str = "",
        channel: str = "",
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        namespace: str = "default",
        dedupe_key: str | None = None,
        expires_at: TimeLike | None = None,
        scope: str = "workspace",
        session: str | None = None,
        importance: float | None = None,
        ttl: float | None = None,
        enrich: bool | None = None,
        confidence: float | None = None,
        compression_level: int | None = None,
        entities: Iterable[str] = (),
        source_turn_ids: Iterable[str] = (),
        index: bool | str = True,
        keyword_text: str | None = None,
        semantic_text: str | None = None,
        vector: Sequence[float] | None = None,
        on_conflict: str = "replace",
        original: bytes | os.PathLike[str] | None = None,
        original_name: str = "",
        media_type: str = "",
    ) -> str:
        """Store a document and return its id.

        The id is stable: the same ``(namespace, source, source_id)``, or the same
        ``dedupe_key`` within ``(namespace, scope)``, updates the document in place;
        identical content is a no-op. ``scope`` is ``workspace``, ``session`` (visible
        only to readers of the same ``session``) or ``global`` (readable from every
        namespace); ``ttl`` is seconds until the document expires. ``enrich`` asks the
        configured LLM for a summary, keywords and entities (default: the store's
        ``settings()``); see :mod:`trove.enrich`.

        ``importance`` (default 0.5) and ``confidence`` (default 1.0) are yours to set;
        ``compression_level``, ``entities`` and ``source_turn_ids`` too. ``index``
        (``True``, ``False``, ``"keyword"``, ``"semantic"``) says which indexes hold the
        entry, ``keyword_text``/``semantic_text`` what they index instead of the text
        (see :mod:`trove.memory.entry`); ``vector`` is your own embedding of the entry
        (see :mod:`trove.operations.own_vectors`).
        ``on_conflict`` says what happens to a key already stored: ``replace`` (the
        default) makes this the whole record, ``merge`` changes only the arguments given
        (those not left at their defaults), ``keep`` leaves the stored document as it is.
        ``original`` (bytes, or a file's path, read in pieces) keeps the source the text
        came from, named ``original_name``, of ``media_type`` (see :meth:`original`).
        """
        record = dict(locals())
        del record["self"], record["on_conflict"], record["enrich"]
        for key in ("original", "original_name", "media_type"):
            del record[key]
        if on_conflict == "merge":
            record = upsert.given(record, _ADD_DEFAULTS)
        if original is None:
            return self.write_many([record], on_conflict=on_conflict, enrich=enrich)[0].id
        with self.transaction():  # the document and its original, or neither
            doc_id = self.write_many([record], on_conflict=on_conflict)[0].id
            originals.attach(self, doc_id, original, original_name, media_type)
        if enrich is not False and enrichment.wanted(self, enrich):
            enrichment.enrich(self, [doc_id])
        return doc_id

    def add_many(
        self: Writing,
        items: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        on_conflict: str = "replace",
    ) -> list[str]:
        """Store many documents (dicts of :meth:`add`'s arguments), one transaction per
        batch; ``on_conflict`` as in :meth:`add` (with ``merge``, an item's keys are the
        fields it gives). Returns the ids of the documents written, in order.

        A bulk load goes on past an item that holds nothing to store (no text and no title,
        common in public corpora): it is skipped and named in a warning of the ``trove``
        logger (by its ``source_id``, ``dedupe_key`` or position); a single :meth:`add` of
        one refuses it."""
        upsert.check(on_conflict)
        skipped: list[str] = []
        kept = upsert.skipping_empty(items, skipped) if on_conflict != "merge" else items
        results = self.write_many(kept, batch_size=batch_size, on_conflict=on_conflict)
        if skipped:
            _log.warning(
                "add_many skipped %d items with no text and no title: %s",
                len(skipped),
                ", ".join(skipped),
            )
        return [result.id for result in results]

    def write_many(
        self: Writing,
        items: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        author_tier: str | None = None,
        enrich: bool | None = None,
        on_conflict: str = "replace",
    ) -> list[WriteResult]:
        """Like :meth:`add_many`, saying for each item what the write did.

        ``author_tier`` is set by the interface that received the writes (default: the
        store's, ``explicit`` for library calls). ``enrich``: as in :meth:`add`, after
        the writes commit (a failure leaves them stored, marked un-enriched).
        """
        tier = author_tier or self.author_tier
        enriching = enrich is not False and enrichment.wanted(
            self, enrich
        )  # refused before writing
        results = upsert.write_many(
            self.writer, items, batch_size=batch_size, author_tier=tier, on_conflict=on_conflict
        )
        if enriching:
            enrichment.enrich(self, [r.id for r in results if r.action != "unchanged"])
        if len(results) > 1:  # a bulk write: the store at rest is its file, no log beside it
            fold_log(self)
        return results

    def delete(self: Writing, doc_id: str) -> bool:
        """Tombstone a document: gone from search and :meth:`get`, back with :meth:`restore`.

        Returns True if this call deleted it, False if it was deleted already."""
        return lifecycle.delete(self, doc_id)

    def restore(self: Writing, doc_id: str) -> None:
        """Undo :meth:`delete` (until :meth:`purge` removes the document for good)."""
        lifecycle.restore(self, doc_id)

    def purge(self: Writing, ids: Iterable[str] | None = None) -> int:
        """Remove documents for good; returns how many.

        Without ``ids``: every tombstoned and expired document. With ``ids``: those
        documents, whatever their state (unknown ids are skipped, and not counted)."""
        return lifecycle.purge_spent(self) if ids is None else lifecycle.purge(self, ids)

    def clear(self: Writing, namespace: str) -> int:
        """Remove every document of ``namespace`` for good (all scopes, deleted ones too),
        in one transaction; returns how many. A write racing it is either removed whole or
        kept whole."""
        return lifecycle.clear(self, namespace)

    def transaction(self: Writing) -> AbstractContextManager[None]:
        """``with kb.transaction(): ...`` makes the writes inside (adds, updates, deletes,
        links) one transaction: all kept, or none if the block raises. Events are emitted
        after the commit, and not at all on a rollback."""
        return transactions.transaction(self)

    def reembed(
        self: Writing,
        embedder: EmbedderSpec = AUTO,
        *,
        missing: bool = False,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Rebuild vectors; returns how many chunks were embedded.

        ``missing=True`` embeds only chunks without a vector (after a crash, or for a
        store that was written keyword-only). Otherwise every chunk is embedded with
        ``embedder`` into a new table, and the store switches to it in one transaction:
        a crash midway leaves the old vectors in use.
        """
        embedded = self.vectors.reembed(
            embedder, missing=missing, batch_size=batch_size, progress=progress
        )
        fold_log(self)  # a bulk write: a whole vector table, and the old one dropped
        return embedded

    def update(self: Writing, doc_id: str, **changes: Any) -> str:
        """Change a document's ``text``, ``title``, ``tags``, ``metadata`` (replaced),
        ``importance``, ``expires_at`` or ``ttl``, or its memory fields and entry control
        (``confidence``, ``compression_level``, ``entities``, ``source_turn_ids``,
        ``index``, ``keyword_text``, ``semantic_text``); its id, provenance, ``author_tier``
        (who wrote it: an agent's edit of a human's note leaves it the human's) and
        created_at stay.

        Scope, dedupe key, namespace and provenance cannot change (``InvalidInput``).
        """
        upsert.check_updatable(changes)
        old = self.peek(doc_id)
        if old is None:
            raise NotFound(f"no document with id {doc_id!r}")
        item = upsert.changed(old, changes)
        self.writer.write([self.writer.prepare(item, author_tier=old.author_tier, doc_id=doc_id)])
        ownership.mark_edited(self.backend, old)  # the next ingest restores the file's text
        return doc_id


def fold_log(self: WithBackend) -> None:
    """Take a backend's write-ahead log into its file (SQLite: a bulk write leaves tens of
    MB of log otherwise, until the last connection closes)."""
    if isinstance(self.backend, WriteLog):
        self.backend.fold_log()


# add()'s defaults: with on_conflict="merge", an argument left at its default is not given.
_ADD_DEFAULTS = {
    name: param.default
    for name, param in inspect.signature(StoreWrites.add).parameters.items()
    if param.default is not inspect.Parameter.empty
}
