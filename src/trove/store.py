"""Store: the public API, written once above a backend that keeps rows and indexes."""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from trove import store_writes, validate
from trove.backends.base import LocalIndexes
from trove.errors import InvalidQuery, NotFound
from trove.event_kinds import EVENT_KINDS
from trove.models import FUSIONS
from trove.operations import listing

if TYPE_CHECKING:
    from trove import agent, enrich, originals, store_search, workspace, write
    from trove import llm as chat_models
    from trove.embedders.base import Embedder
    from trove.ingest import ownership
    from trove.ingest.report import IngestReport
    from trove.llm import ChatModel
    from trove.memory import canonical
    from trove.memory import clusters as cluster_groups
    from trove.memory.clusters import Clusters
    from trove.models import Document, Edge, Page, Stats
    from trove.operations import edges, lifecycle, transactions
    from trove.operations import rechunk as rechunking
    from trove.parts import Memos
    from trove.search import hybrid, request
    from trove.search.variants import SearchResults
    from trove.store_parts import StoreParts
    from trove.workspace import Workspace
    from trove.write import Writer
else:
    # The search stack and the write path load at their first use, as do the chat model,
    # edges, atomic writes and ingest's ownership: opening a store and counting it (trove
    # stats) need none of them (tests/coldstart/ checks what loads).
    from trove.lazy import LazyModule

    agent = LazyModule("trove.agent")
    canonical = LazyModule("trove.memory.canonical")
    chat_models = LazyModule("trove.llm")
    cluster_groups = LazyModule("trove.memory.clusters")
    edges = LazyModule("trove.operations.edges")
    enrich = LazyModule("trove.enrich")
    hybrid = LazyModule("trove.search.hybrid")
    lifecycle = LazyModule("trove.operations.lifecycle")
    originals = LazyModule("trove.originals")
    rechunking = LazyModule("trove.operations.rechunk")
    request = LazyModule("trove.search.request")
    ownership = LazyModule("trove.ingest.ownership")
    store_search = LazyModule("trove.store_search")
    transactions = LazyModule("trove.operations.transactions")
    workspace = LazyModule("trove.workspace")
    write = LazyModule("trove.write")


class Store(store_writes.StoreWrites):
    """A knowledge store. Open one with :func:`trove.open`."""

    def __init__(
        self,
        parts: StoreParts,
        *,
        fusion: str = "convex",
        keyword_weight: float | None = None,
        author_tier: str = "explicit",
        llm: Any = "env",
    ) -> None:
        """A store over ``parts``, which :func:`trove.open` assembles
        (:func:`trove.opening.assemble`): the store keeps them and makes none."""
        if fusion not in FUSIONS:
            raise InvalidQuery(f"unknown fusion {fusion!r}; use one of: {', '.join(FUSIONS)}")
        self.backend = parts.backend
        self.vectors = parts.vectors
        self.events = parts.events
        self.access = parts.access
        self.record_retrievals = parts.record_retrievals
        self.expansion_counts = parts.expansion_counts
        self._chunking = parts.chunking
        self._lock = parts.lock
        self._pool = parts.pool
        self.fusion = fusion
        self.keyword_weight = keyword_weight
        self.author_tier = author_tier
        # The agent loop (trove.agent): an LLM only when configured.
        self._llm = llm
        # Originals larger than this are refused (None: $TROVE_MAX_ORIGINAL_BYTES or 1 GiB).
        self.max_original_bytes: int | None = None

    # --- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Close the store; using it afterwards raises ``StoreError`` (closing again is fine)."""
        # A name ("env", "openai:MODEL") or None: no model was made, so none to close.
        if not isinstance(self._llm, str | None) and isinstance(self._llm, chat_models.ChatModel):
            self._llm.close()
        self.access.close()
        self._pool.shutdown()
        self.backend.close()
        from trove.backends.closed import ClosedBackend

        closed: Any = ClosedBackend()
        self.backend = self.vectors.backend = closed
        if "writer" in self.__dict__:
            self.writer.backend = closed

    def warm(self) -> None:
        """Load the in-memory search indexes now, so the first queries do not wait.

        A SQLite store keeps its vectors and, past 1,000 chunks, its word postings in
        memory for speed; they are otherwise loaded when first needed (in the background
        from a process's second query, FTS5 and an exact scan answering meanwhile). For a
        long-running process that wants its first queries fast: this waits for the
        loading. From 10,000 chunks a loaded index is saved beside the file, and the next
        process maps it in milliseconds; a smaller store is read again (under a second at
        SciFact's 8,719 chunks). A PostgreSQL store reads its most frequent words'
        postings into this process (``warm_words``)."""
        if isinstance(self.backend, LocalIndexes):
            self.backend.warm()
        warm_words = getattr(self.backend, "warm_words", None)
        if warm_words is not None:
            warm_words()

    def reading(self) -> AbstractContextManager[None]:
        """``with kb.reading(): ...`` runs beside other readers, never beside a writer: for
        threads sharing the store (see :mod:`trove.rwlock`; the store's own methods do not
        take it)."""
        return self._lock.read()

    def writing(self) -> AbstractContextManager[None]:
        """``with kb.writing(): ...`` runs alone (readers that come while it waits, after it)."""
        return self._lock.write()

    @property
    def chunk_chars(self) -> int:
        return self._chunking[0]

    @property
    def chunk_overlap(self) -> int:
        return self._chunking[1]

    @functools.cached_property
    def writer(self) -> Writer:
        """The one write path: add, write_many, update, workspaces and ingest all use it
        (made at the first write: a store opened to read never loads it)."""
        chunker = write.Chunker(*self._chunking)
        return write.Writer(self.backend, self.vectors, chunker, self.notify)

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
            self._llm = chat_models.ChatModel.from_env()
        elif isinstance(self._llm, str):
            self._llm = chat_models.ChatModel.from_spec(self._llm)
        return self._llm

    def enrichment(self, doc_id: str) -> dict[str, Any] | None:
        """A document's write-time enrichment (``status``: done, failed or stale), or None."""
        rows = enrich.enrichments(self)
        return None if rows is None else rows.get(doc_id)

    def settings(self, **changes: str | None) -> dict[str, str]:
        """The store's own defaults (kept in the file), after applying ``changes``:
        ``expand`` (``llm`` or ``off``) and ``enrich`` (``on`` or ``off``)."""
        return agent.settings(self, **changes)

    # --- writing: add, add_many, write_many, update, delete, restore, purge, clear,
    # transaction and reembed are StoreWrites' (trove/store_writes.py) ----------------

    def link(self, src: str, dst: str, type: str = "relates_to", weight: float = 1.0) -> Edge:
        """A typed, weighted edge from ``src`` to ``dst`` (linking again sets the weight)."""
        return edges.link(self, src, dst, type, weight)

    def unlink(self, src: str, dst: str, type: str | None = None) -> int:
        """Remove the edges from ``src`` to ``dst`` (of one type, or all); returns how many."""
        return self.backend.delete_edges(src, dst, type)

    def neighbors(self, doc_id: str, type: str | None = None) -> list[Edge]:
        """Edges from or to ``doc_id`` whose other end is a live document, heaviest first."""
        return edges.neighbors(self, doc_id, type)

    def workspace(self, namespace: str = "default", **rights: Any) -> Workspace:
        """This store as one caller sees it: see :class:`trove.workspace.Workspace`."""
        return workspace.Workspace(self, namespace, **rights)

    def subscribe(
        self, callback: Callable[[dict[str, Any]], None], kinds: Iterable[str] = EVENT_KINDS
    ) -> Callable[[], None]:
        """Call ``callback`` after each committed ``written``/``updated``/``deleted`` change
        with ``{kind, id, namespace, scope, importance}``; returns a function that stops it."""
        return self.events.subscribe(callback, kinds)

    def notify(self, kind: str, doc: Document) -> None:
        if not transactions.defer(self, kind, doc):  # inside kb.transaction(): after the commit
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

    def chunk_vectors(self, doc_id: str) -> list[list[float] | None]:
        """The stored vector of each chunk of a live document, in chunk order (None for a
        chunk without one; ``[]`` in a store without vectors): the caller's own as they were
        normalized, or the embedder's. NotFound if the document is not live."""
        if self.peek(doc_id) is None:
            raise NotFound(f"no document with id {doc_id!r}")
        lock = self.backend.vector_lock()
        if lock is None:
            return []
        rows = self.backend.export_chunks([doc_id], lock.table).get(doc_id, [])
        return [None if vector is None else vector.tolist() for _, vector in rows]

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
        if doc is None or doc.deleted_at is not None or doc.expired:
            return None
        return doc

    def flush_access(self) -> int:
        """Write the pending access counts now (they are otherwise written about once a
        second, and at close); returns how many documents they touched."""
        return self.access.flush()

    def get_by_key(
        self,
        source: str | None = None,
        source_id: str | None = None,
        *,
        dedupe_key: str | None = None,
        namespace: str = "default",
        scope: str = "workspace",
        session: str | None = None,
    ) -> Document | None:
        """The document stored under ``(namespace, source, source_id)``, or under
        ``dedupe_key`` within ``(namespace, scope)``, as :meth:`get`."""
        doc_id = lifecycle.key_id(source, source_id, dedupe_key, namespace, scope, session)
        return self.get(doc_id)

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
        ``linked_from``. ``variants`` are other phrasings of the query, searched with it in
        one pass (see :mod:`trove.search.phrasings`); ``expand="llm"`` asks the
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
        options: dict[str, Any] = dict(limit=limit, mode=mode, vector=vector, raw=raw)
        options.update(explain=explain, variants=variants, rerank=rerank, context=context)
        options.update(min_score=min_score, with_text=with_text, max_tokens=max_tokens)
        options.update(expand=agent.expand_default(self) if expand is None else expand)
        asked = request.SearchRequest.build(query, self.has_duplicates(), **options, **filters)
        found = store_search.found(self, asked)
        if self.record_retrievals:
            for hit in found:
                self.events.emit_hit("retrieved", hit)
        if record_access:
            self.access.note(h.doc_id for h in found)
        return found

    @functools.cached_property
    def memos(self) -> Memos:
        """What the agent loop remembers between calls (settings, enrichment, expansions)."""
        from trove.parts import Memos

        return Memos()

    @functools.cached_property
    def hybrid_search(self) -> hybrid.HybridSearch:
        """Keyword, semantic and hybrid ranking over this store's parts."""
        return hybrid.HybridSearch(self, self._pool, lambda: transactions.active(self))

    @property
    def clusters(self) -> Clusters:
        """Named groups of memories with a rolling summary and a decision log: see
        :mod:`trove.memory.clusters`."""
        return cluster_groups.Clusters(self)

    def has_duplicates(self) -> bool:
        """Whether canonicalize has marked duplicates here (search then collapses them):
        as this handle read it within ``canonical.MARK_AGE_S``."""
        return self.backend.get_meta(canonical.META_KEY, max_age=canonical.MARK_AGE_S) is not None

    def canonicalize(self, **options: Any) -> builtins.list[canonical.DuplicateGroup]:
        """Fold near-duplicates into canonical documents (reversible, nothing deleted):
        ``threshold``, ``text_threshold``, ``namespace``, ``rule``, ``dry_run``; see
        :mod:`trove.memory.canonical`."""
        return canonical.canonicalize(self, **options)

    def rechunk(
        self,
        doc_ids: Iterable[str] | None = None,
        *,
        namespace: str | None = None,
        **chunking: int,
    ) -> rechunking.RechunkReport:
        """Cut documents (``doc_ids``, or a namespace's, or all) into chunks again with
        ``chunk_chars``/``chunk_overlap`` (default: this store's); see
        :mod:`trove.operations.rechunk`."""
        chunking = {
            "chunk_chars": self.chunk_chars,
            "chunk_overlap": self.chunk_overlap,
        } | chunking
        return rechunking.rechunk(self, doc_ids, namespace=namespace, **chunking)

    def uncanonicalize(self, namespace: str = "default") -> int:
        """Undo :meth:`canonicalize` in a namespace; returns how many it unmarked."""
        return canonical.uncanonicalize(self, namespace=namespace)

    def stats(self, namespace: str | None = None, *, session: str | None = None) -> Stats:
        """Counts and sizes (of one namespace, if given); never loads an embedding model.

        ``session`` counts only that session's session-scoped items (``""``: none)."""
        return listing.stats(self.backend, self.vectors, self.expansion_counts, namespace, session)

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
        from trove.store_ingest import StoreTarget

        return ingest(StoreTarget(self), path, **options)

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        """(source_id, doc id, content hash, deleted) for every document of one source."""
        for source_id, (doc_id, digest, deleted) in self.backend.source_hashes(
            namespace, source
        ).items():
            yield source_id, doc_id, digest, deleted

    # Last in the class: from here on ``list`` names this method, not the builtin (the
    # public name is the contract; the shadowing stops at the class's end).
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
        return listing.page(
            self.backend,
            namespace,
            scope=scope,
            session=session,
            cursor=cursor,
            limit=limit,
            include_deleted=include_deleted,
            **filters,
        )
