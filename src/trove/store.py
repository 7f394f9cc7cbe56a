"""Store: the public API, written once above a backend that keeps rows and indexes."""

from __future__ import annotations

import base64
import builtins
import functools
import inspect
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from trove import originals, validate
from trove.agent import purgeable
from trove.backends.base import Backend, FileState, LocalIndexes
from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP
from trove.embedders.base import Embedder
from trove.embedders.vectorizer import AUTO, EmbedderSpec, Vectorizer
from trove.enrich import wanted, with_enrichment
from trove.errors import InvalidInput, InvalidQuery, NotFound
from trove.events import EVENT_KINDS, Events
from trove.expansion import CacheCounts
from trove.ingest import ownership
from trove.llm import ChatModel
from trove.memory import atomic, canonical, lifecycle, own_vectors, upsert
from trove.memory.access import AccessRecorder
from trove.memory.clusters import Clusters
from trove.models import Document, Edge, Page, Stats
from trove.rwlock import ReadWriteLock
from trove.search import budget, memory_rank
from trove.search.filters import Filters
from trove.search.fusion import FUSIONS
from trove.search.hybrid import HybridSearch
from trove.search.variants import SearchResults
from trove.timeutil import TimeLike, now, to_epoch
from trove.workspace import Workspace
from trove.write import Chunker, Writer, WriteResult

if TYPE_CHECKING:
    from trove.ingest.report import IngestReport


class Store:
    """A knowledge store. Open one with :func:`trove.open`."""

    def __init__(
        self,
        backend: Backend,
        *,
        embedder: EmbedderSpec = AUTO,
        default_embedder: str = "default",
        chunk_chars: int = DEFAULT_MAX_CHARS,
        chunk_overlap: int = DEFAULT_OVERLAP,
        fusion: str = "convex",
        keyword_weight: float | None = None,
        author_tier: str = "explicit",
        llm: Any = "env",
        record_retrievals: bool | None = None,
        record_access: bool = True,
    ) -> None:
        if fusion not in FUSIONS:
            raise InvalidQuery(f"unknown fusion {fusion!r}; use one of: {', '.join(FUSIONS)}")
        self.backend = backend
        self.fusion = fusion
        self.keyword_weight = keyword_weight
        self.author_tier = author_tier
        self.events = Events()
        self.vectors = Vectorizer(backend, embedder, default_embedder)
        chunker = Chunker(chunk_chars, chunk_overlap)
        self.writer = Writer(backend, self.vectors, chunker, self.notify)
        # Servers' request threads: reads together, a write alone (see reading/writing).
        self._lock = ReadWriteLock()
        # The agent loop (trove.agent): an LLM only when configured; reads announced
        # ("retrieved" events) only when asked, since most hosts do not audit reads.
        self._llm = llm
        self.expansion_counts = CacheCounts()
        if record_retrievals is None:  # servers: set in the environment they run in
            record_retrievals = os.environ.get("TROVE_RECORD_RETRIEVALS", "") in ("1", "true")
        self.record_retrievals = record_retrievals
        # access_count/last_accessed of what reads hand out (record_access=False: not).
        self.access = AccessRecorder(backend, enabled=record_access)
        # Hybrid searches embed and rank the query here while the keyword leg runs; kept
        # for the store's life (starting a thread per query cost ~2 ms).
        # Originals larger than this are refused (None: $TROVE_MAX_ORIGINAL_BYTES or 1 GiB).
        self.max_original_bytes: int | None = None
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="trove-search")

    # --- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Close the store; using it afterwards raises ``StoreError`` (closing again is fine)."""
        from trove.opening import ClosedBackend

        if isinstance(self._llm, ChatModel):
            self._llm.close()
        self.access.close()
        self._pool.shutdown()
        self.backend.close()
        closed: Any = ClosedBackend()
        self.backend = self.vectors.backend = self.writer.backend = closed

    def warm(self) -> None:
        """Load the in-memory search indexes now, so the first queries do not wait.

        A SQLite store keeps its vectors and, past 20,000 chunks, its word postings in
        memory for speed; they are otherwise loaded when first needed (the word index in
        the background, FTS5 answering meanwhile). For a long-running process that wants
        its first queries fast: this waits for the loading (~7 s at 100k chunks)."""
        if isinstance(self.backend, LocalIndexes):
            self.backend.warm()

    def reading(self) -> AbstractContextManager[None]:
        """``with kb.reading(): ...`` runs alongside other readers, never beside a writer.

        For a store shared by threads (the servers' request handlers): the backend runs one
        statement at a time and keeps a transaction to its thread, but a write is more than
        its transaction. It reads first (is this key taken? which chunks change?), commits,
        then updates the in-memory vector index; two writes to one item could interleave
        those steps, and a search between them could see rows without their vectors. The
        store's own methods do not take this lock: its threaded callers do."""
        return self._lock.read()

    def writing(self) -> AbstractContextManager[None]:
        """``with kb.writing(): ...`` runs alone: after the readers and writers before it,
        and before readers that come while it waits (see :meth:`reading`)."""
        return self._lock.write()

    @property
    def chunk_chars(self) -> int:
        return self.writer.chunker.max_chars

    @property
    def chunk_overlap(self) -> int:
        return self.writer.chunker.overlap

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- embedder ---------------------------------------------------------------------

    @property
    def has_embedder(self) -> bool:
        """False for a keyword-only store (opened with ``embedder=None``)."""
        return self.vectors.enabled

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, created on first use (a keyword-only session never loads one)."""
        return self.vectors.embedder

    @property
    def llm(self) -> ChatModel | None:
        """The chat model for expansion and enrichment: ``llm=`` of :func:`trove.open` (a
        :class:`~trove.llm.ChatModel` or ``"openai:MODEL"``), else ``$TROVE_LLM``; None
        when none is configured (the default: trove never calls out on its own)."""
        if self._llm == "env":
            self._llm = ChatModel.from_env()
        elif isinstance(self._llm, str):
            self._llm = ChatModel.from_spec(self._llm)
        return self._llm

    def enrichment(self, doc_id: str) -> dict[str, Any] | None:
        """A document's write-time enrichment (``status``: done, failed or stale), or None."""
        from trove.enrich import enrichments

        rows = enrichments(self)
        return None if rows is None else rows.get(doc_id)

    def settings(self, **changes: str | None) -> dict[str, str]:
        """The store's own defaults (kept in the file), after applying ``changes``:
        ``expand`` (``llm`` or ``off``) and ``enrich`` (``on`` or ``off``)."""
        from trove.agent import settings

        return settings(self, **changes)

    # --- writing ----------------------------------------------------------------------

    def add(
        self,
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
        (see :mod:`trove.memory.own_vectors`).
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
        if enrich is not False and wanted(self, enrich):
            from trove.enrich import enrich as enrich_now

            enrich_now(self, [doc_id])
        return doc_id

    def add_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        on_conflict: str = "replace",
    ) -> list[str]:
        """Store many documents (dicts of :meth:`add`'s arguments), one transaction per
        batch; ``on_conflict`` as in :meth:`add` (with ``merge``, an item's keys are the
        fields it gives)."""
        results = self.write_many(items, batch_size=batch_size, on_conflict=on_conflict)
        return [result.id for result in results]

    def write_many(
        self,
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
        enriching = enrich is not False and wanted(self, enrich)  # refused before writing
        results = upsert.write_many(
            self.writer, items, batch_size=batch_size, author_tier=tier, on_conflict=on_conflict
        )
        if enriching:
            from trove.enrich import enrich as enrich_now

            enrich_now(self, [r.id for r in results if r.action != "unchanged"])
        return results

    def delete(self, doc_id: str) -> bool:
        """Tombstone a document: gone from search and :meth:`get`, back with :meth:`restore`.

        Returns True if this call deleted it, False if it was deleted already."""
        doc = self.backend.get_document(doc_id, with_text=False)
        if doc is None:
            raise NotFound(f"no document with id {doc_id!r}")
        if doc.deleted_at is not None:
            return False
        with self.transaction():
            self.backend.set_deleted(doc_id, now())
            self.backend.remove_members(None, [doc_id])  # out of its clusters
            self.notify("deleted", doc)
        return True

    def restore(self, doc_id: str) -> None:
        """Undo :meth:`delete` (until :meth:`purge` removes the document for good)."""
        doc = self.backend.get_document(doc_id, with_text=False)
        if doc is None:
            raise NotFound(f"no document with id {doc_id!r} (purged documents cannot return)")
        if doc.deleted_at is not None:
            self.backend.set_deleted(doc_id, None)
            self.notify("restored", doc)

    def purge(self, ids: Iterable[str] | None = None) -> int:
        """Remove documents for good; returns how many.

        Without ``ids``: every tombstoned and expired document. With ``ids``: those
        documents, whatever their state (unknown ids are skipped, and not counted)."""
        if ids is not None:
            return lifecycle.purge(self, ids)
        stamp = now()
        doomed = purgeable(self, stamp) if self.events.listening("purged") else {}
        purged = self.backend.purge(stamp)
        for doc_id in purged:
            self.notify("purged", doomed.get(doc_id) or Document(id=doc_id, text=""))
        return len(purged)

    def clear(self, namespace: str) -> int:
        """Remove every document of ``namespace`` for good (all scopes, deleted ones too),
        in one transaction; returns how many. A write racing it is either removed whole or
        kept whole."""
        return lifecycle.clear(self, namespace)

    def transaction(self) -> AbstractContextManager[None]:
        """``with kb.transaction(): ...`` makes the writes inside (adds, updates, deletes,
        links) one transaction: all kept, or none if the block raises. Events are emitted
        after the commit, and not at all on a rollback."""
        return atomic.transaction(self)

    def reembed(
        self,
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
        return self.vectors.reembed(
            embedder, missing=missing, batch_size=batch_size, progress=progress
        )

    def update(self, doc_id: str, **changes: Any) -> str:
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

    def list(
        self,
        namespace: str = "default",
        *,
        scope: str | Sequence[str] | None = None,
        session: str | None = None,
        cursor: str | None = None,
        limit: int = 20,
        include_deleted: bool = False,
        **filters: Any,
    ) -> Page:
        """Documents of a namespace, newest first, a page at a time.

        Expired documents are listed (``doc.expired``), deleted ones only with
        ``include_deleted``. Pass ``page.cursor`` back for the next page. Filters as in
        :meth:`search` (source, doc_type, author, tags, since, until, entities,
        min_importance, min_confidence) and ``max_compression`` (memories a caller may
        summarise: ``max_compression=0``); metadata is not a list filter.
        """
        if not isinstance(limit, int) or not 0 < limit <= 1000:
            raise InvalidQuery("limit must be between 1 and 1000")
        if "metadata" in filters:
            raise InvalidQuery("list does not filter by metadata; search does")
        where = Filters.build(namespace=namespace, scope=scope, **filters)
        scopes = where.scope
        after = decode_cursor(cursor) if cursor else None
        items = self.backend.list_documents(
            namespace,
            scope=scopes,
            session=session,
            after=after,
            limit=limit,
            include_deleted=include_deleted,
            filters=where,
        )
        last = items[-1] if len(items) == limit else None
        return Page(items, encode_cursor(last) if last else None)

    def link(self, src: str, dst: str, type: str = "relates_to", weight: float = 1.0) -> Edge:
        """A typed, weighted edge from ``src`` to ``dst`` (linking again sets the weight)."""
        if not type or not isinstance(type, str):
            raise InvalidInput("an edge needs a type, e.g. relates_to or supersedes")
        validate.string(type, "type")
        weight = validate.number(weight, "weight", *validate.WEIGHT_RANGE)
        for doc_id in (src, dst):
            if self.peek(doc_id) is None:
                raise NotFound(f"no document with id {doc_id!r}")
        if src == dst:
            raise InvalidInput("a document cannot link to itself")
        self.backend.put_edge(src, dst, type, float(weight), now())
        # Read back: a link made again keeps its first created_at.
        for edge in self.backend.edges_of([src], type):
            if edge.src == src and edge.dst == dst:
                return edge
        return Edge(src, dst, type, float(weight))  # pragma: no cover - just written

    def unlink(self, src: str, dst: str, type: str | None = None) -> int:
        """Remove the edges from ``src`` to ``dst`` (of one type, or all); returns how many."""
        return self.backend.delete_edges(src, dst, type)

    def neighbors(self, doc_id: str, type: str | None = None) -> builtins.list[Edge]:
        """Edges from or to ``doc_id`` whose other end is a live document, heaviest first."""
        edges = self.backend.edges_of([doc_id], type)
        live = {e.dst if e.src == doc_id else e.src for e in edges}
        live = {d for d in live if self.peek(d) is not None}
        return [e for e in edges if (e.dst if e.src == doc_id else e.src) in live]

    def workspace(self, namespace: str = "default", **rights: Any) -> Workspace:
        """This store as one caller sees it: see :class:`trove.workspace.Workspace`."""
        return Workspace(self, namespace, **rights)

    def subscribe(
        self, callback: Callable[[dict[str, Any]], None], kinds: Iterable[str] = EVENT_KINDS
    ) -> Callable[[], None]:
        """Call ``callback`` after each committed ``written``/``updated``/``deleted`` change
        with ``{kind, id, namespace, scope, importance}``; returns a function that stops it."""
        return self.events.subscribe(callback, kinds)

    def notify(self, kind: str, doc: Document) -> None:
        if not atomic.defer(self, kind, doc):  # inside kb.transaction(): after the commit
            self.events.emit(kind, doc)

    # --- reading ----------------------------------------------------------------------

    def get(self, doc_id: str, *, record_access: bool = True) -> Document | None:
        """The document exactly as stored, or None if absent, deleted or expired.

        Counts as a use of it (``access_count``, ``last_accessed``, written in the
        background) unless ``record_access=False`` or the store was opened with it off."""
        doc = self.peek(doc_id)
        if doc is None:
            return None
        if self.record_retrievals:
            self.notify("retrieved", doc)
        if record_access:
            self.access.note([doc.id])
        return doc

    def original(self, doc_id: str) -> originals.Original:
        """The bytes ``doc_id`` was made from, with file name and media type (NotFound if
        the document is not live or has no original). Reads it whole: for large ones,
        :meth:`original_info` and :meth:`original_pieces`."""
        found = originals.info(self, doc_id)
        data = b"".join(originals.pieces(self, found))
        return originals.Original(data, found.name, found.media_type)

    def original_info(self, doc_id: str) -> originals.OriginalInfo:
        """Name, media type, size and SHA-256 of ``doc_id``'s original (NotFound: none)."""
        return originals.info(self, doc_id)

    def original_pieces(self, doc_id: str) -> Iterator[bytes]:
        """``doc_id``'s original in pieces of 1 MiB, never whole in memory."""
        return originals.pieces(self, originals.info(self, doc_id))

    def peek(self, doc_id: str) -> Document | None:
        """:meth:`get` for trove's own checks: no ``retrieved`` event, no recorded use."""
        validate.string(doc_id, "doc_id", InvalidQuery)
        doc = self.backend.get_document(doc_id)
        if doc is None or doc.deleted_at is not None or _expired(doc):
            return None
        return doc

    def _expand_default(self) -> int | str:
        from trove.agent import expand_default

        return expand_default(self)

    def flush_access(self) -> int:
        """Write the pending access counts now (they are otherwise written about once a
        second, and at close); returns how many documents they touched."""
        return self.access.flush()

    def get_by_key(
        self,
        source: str,
        source_id: str,
        *,
        namespace: str = "default",
        scope: str = "workspace",
        session: str | None = None,
    ) -> Document | None:
        """The document stored under ``(namespace, source, source_id)``, as :meth:`get`."""
        return lifecycle.get_by_key(self, source, source_id, namespace, scope, session)

    def search(
        self,
        query: str = "",
        *,
        mode: str | None = None,
        limit: int = 10,
        raw: bool = False,
        explain: bool = False,
        expand: int | str | None = None,
        variants: Sequence[str] | None = None,
        vector: Sequence[float] | None = None,
        rerank: str | Mapping[str, Any] | None = None,
        record_access: bool = True,
        min_score: float | None = None,
        with_text: bool = False,
        context: int = 0,
        max_tokens: int | None = None,
        **filters: Any,
    ) -> SearchResults:
        """Documents matching ``query``, best first (one hit per document).

        ``mode`` is ``keyword``, ``semantic`` or ``hybrid`` (the default when the store
        has an embedder). Filters: ``namespace``, ``source``, ``doc_type``, ``author`` (a
        value or a list, any of which matches), ``tags`` (all must be present),
        ``since``/``until`` (the timestamp, inclusive), ``metadata`` (a dict of equalities).
        ``explain=True`` adds each retriever's rank and score to every hit; ``expand=N``
        appends the documents linked to the hits (up to N edges away), each marked with
        ``linked_from``. ``variants`` are other phrasings of the query, each searched and
        the lists fused (see :mod:`trove.search.variants`); ``expand="llm"`` asks the
        configured LLM for them (cached; on any failure the plain results come back with
        ``degraded`` set). Without ``expand``, the store's ``settings()`` decide.
        ``vector=[...]`` searches by your own query vector instead of ``query`` (every
        filter applies). ``rerank="memory"`` (or a dict) blends relevance with recency,
        importance and use: see :mod:`trove.search.memory_rank`. The hits returned count
        as uses of their documents unless ``record_access=False``.

        A hit's ``score`` estimates the probability, in [0, 1], that it is relevant (see
        :mod:`trove.search.calibration`); ``min_score`` drops hits below it (default: no
        floor), and a document stored with its own ``min_score`` surfaces only above that.
        ``with_text=True`` gives each hit its best chunk's text and heading path,
        ``context=N`` adds the N chunks on each side, and ``max_tokens=N`` returns as many
        hits with text as fit in N tokens (see :mod:`trove.search.budget`).
        """
        expand = self._expand_default() if expand is None else expand
        if expand != "llm":
            validate.count(expand, 'expand (or "llm")', 0, validate.MAX_EXPAND, InvalidQuery)
        budgeted = budget.Options.check(min_score, with_text, context, max_tokens)
        if filters.pop("collapse_duplicates", True) and self._has_duplicates():
            filters["collapse"] = True
        options = dict(mode=mode, raw=raw, explain=explain, variants=variants, vector=vector)
        found = self._ranked(query, limit, expand, rerank, options, filters)
        if isinstance(expand, int) and expand > 0 and found:
            found.extend(self._hybrid.linked(found, Filters.build(**filters), expand, now()))
        found[:] = budget.finish(
            self.backend, [h for h in found if budgeted.passes(h.score, h)], budgeted
        )
        if self.record_retrievals:
            for hit in found:
                self.events.emit_hit("retrieved", hit)
        if record_access:
            self.access.note(h.doc_id for h in found)
        return found

    def _ranked(
        self,
        query: str,
        limit: int,
        expand: int | str,
        rerank: str | Mapping[str, Any] | None,
        options: dict[str, Any],
        filters: dict[str, Any],
    ) -> SearchResults:
        """The hits of :meth:`search` before links, budget and access: reranked, by the
        caller's vector, fused over variants, or one ranking (with enrichment)."""
        mode, raw, explain = options["mode"], options["raw"], options["explain"]
        variants, vector = options["variants"], options["vector"]
        if rerank is not None:
            rank = memory_rank.parse(rerank)
            wide = self.search(
                query,
                limit=memory_rank.depth(limit) if isinstance(limit, int) else limit,
                expand=0,
                record_access=False,
                **options,
                **filters,
            )
            return SearchResults(memory_rank.apply(wide, rank, now(), limit, explain))
        if vector is not None:
            where = Filters.build(**filters)
            return SearchResults(own_vectors.search(self, vector, where, limit, explain))
        if variants or expand == "llm":
            from trove.agent import search_variants

            return search_variants(
                self,
                with_enrichment(self, self._hybrid.search),
                query,
                variants,
                llm=expand == "llm",
                limit=limit,
                explain=explain,
                **dict(filters, mode=mode, raw=raw),
            )
        return SearchResults(
            with_enrichment(self, self._hybrid.search)(
                query, mode=mode, limit=limit, raw=raw, explain=explain, **filters
            )
        )

    @functools.cached_property
    def _hybrid(self) -> HybridSearch:
        """Keyword, semantic and hybrid ranking over this store's parts."""
        return HybridSearch(self, self._pool, lambda: atomic.active(self))

    @property
    def clusters(self) -> Clusters:
        """Named groups of memories with a rolling summary and a decision log: see
        :mod:`trove.memory.clusters`."""
        return Clusters(self)

    def _has_duplicates(self) -> bool:
        return self.backend.get_meta(canonical.META_KEY) is not None

    def canonicalize(self, **options: Any) -> builtins.list[canonical.DuplicateGroup]:
        """Fold near-duplicates into canonical documents (reversible, nothing deleted):
        ``threshold``, ``text_threshold``, ``namespace``, ``rule``, ``dry_run``; see
        :mod:`trove.memory.canonical`."""
        return canonical.canonicalize(self, **options)

    def uncanonicalize(self, namespace: str = "default") -> int:
        """Undo :meth:`canonicalize` in a namespace; returns how many it unmarked."""
        return canonical.uncanonicalize(self, namespace=namespace)

    def stats(self, namespace: str | None = None, *, session: str | None = None) -> Stats:
        """Counts and sizes (of one namespace, if given); never loads an embedding model.

        ``session`` counts only that session's session-scoped items (``""``: none)."""
        data = self.backend.stats(now(), namespace, session)
        lock = self.backend.vector_lock()
        vectors = self.backend.vector_count(namespace, session)
        return Stats(
            **data,
            embedder=None if lock is None else lock.to_dict(),
            vectors=vectors,
            expansion_cache=self.expansion_counts.to_dict(),
            chunks_without_vectors=max(0, data["chunks"] - vectors),
            keyword_only=self.vectors.keyword_only and lock is None,
        )

    # --- folders ----------------------------------------------------------------------

    def ingest(self, path: str | os.PathLike[str], **options: Any) -> IngestReport:
        """Store the files under ``path`` (Markdown, text, HTML, PDF, e-mail, JSON/JSONL);
        unchanged files are skipped by content hash, renamed files keep their documents.

        Options: ``source`` (default: the folder's name), ``namespace``, ``include`` and
        ``exclude`` (glob patterns on the relative path), ``sync`` (tombstone documents
        whose file is gone), ``max_bytes``, ``follow_symlinks``, ``dry_run``, ``fields``
        and ``records`` (the JSON field mapping), ``workers``, ``progress`` (called with
        an ``IngestProgress``). See :func:`trove.ingest.run.ingest`.
        """
        from trove.ingest.run import ingest  # here: the readers load only when needed

        return ingest(self, path, **options)

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        """(source_id, doc id, content hash, deleted) for every document of one source."""
        for source_id, (doc_id, digest, deleted) in self.backend.source_hashes(
            namespace, source
        ).items():
            yield source_id, doc_id, digest, deleted

    # What ingest needs beyond the public API (trove.ingest.target.Target).

    def _prepare(self, fields: Mapping[str, Any], doc_id: str | None) -> Document:
        return self.writer.prepare(fields, author_tier=self.author_tier, doc_id=doc_id)

    def _write_prepared(self, docs: Sequence[Document]) -> builtins.list[WriteResult]:
        return self.writer.write(docs)

    def _documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        return self.backend.get_documents(builtins.list(doc_ids))

    def _edges_from(self, doc_id: str, type: str) -> builtins.list[str]:
        return [e.dst for e in self.backend.edges_of([doc_id], type) if e.src == doc_id]

    def _attach_original(
        self, doc_id: str, original: bytes | os.PathLike[str] | str, name: str, media_type: str
    ) -> None:
        originals.attach(self, doc_id, original, name, media_type)

    def _file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        return self.backend.file_states(namespace, source)

    def _set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        self.backend.set_file_states(namespace, source, states)

    def _edited_files(self, namespace: str, source: str) -> set[str]:
        return ownership.edited_files(self.backend, namespace, source)

    def _claim_source(self, namespace: str, source: str, restored: set[str]) -> None:
        ownership.claim(self.backend, namespace, source)
        ownership.restored(self.backend, namespace, source, restored)


def encode_cursor(doc: Document) -> str:
    payload = json.dumps([to_epoch(doc.created_at), doc.id]).encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        created, doc_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return float(created), str(doc_id)
    except (ValueError, TypeError):
        raise InvalidQuery(f"not a cursor from list(): {cursor!r}") from None


def _expired(doc: Document) -> bool:
    expires = to_epoch(doc.expires_at)
    return expires is not None and expires <= now()


# add()'s defaults: with on_conflict="merge", an argument left at its default is not given.
_ADD_DEFAULTS = {
    name: param.default
    for name, param in inspect.signature(Store.add).parameters.items()
    if param.default is not inspect.Parameter.empty
}
