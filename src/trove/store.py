"""Store: the public API, written once above a backend that keeps rows and indexes."""

from __future__ import annotations

import builtins
import os
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trove import listing, originals, store_writes, validate
from trove.agent import settings as agent_settings
from trove.backends.base import Backend
from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP
from trove.embedders.base import Embedder, scripts_of
from trove.embedders.vectorizer import AUTO, EmbedderSpec, Vectorizer
from trove.enrich import enrichments, with_enrichment
from trove.errors import InvalidQuery
from trove.events import EVENT_KINDS, Events
from trove.expansion import CacheCounts
from trove.llm import ChatModel
from trove.memory import atomic, canonical, edges, lifecycle, own_vectors
from trove.memory.access import AccessRecorder
from trove.memory.clusters import Clusters
from trove.models import MODES, Chunk, ChunkHit, Document, Edge, Hit, Page, Stats
from trove.opening import ClosedBackend
from trove.rwlock import ReadWriteLock
from trove.search import budget, calibration, memory_rank, snippet, snippet_text
from trove.search.bounds import bounded
from trove.search.filters import Filters
from trove.search.query import ParsedQuery, parse
from trove.search.ranking import FUSIONS, fuse
from trove.search.variants import SearchResults
from trove.timeutil import now, to_epoch
from trove.workspace import Workspace
from trove.write import Chunker, Writer

if TYPE_CHECKING:
    from trove.ingest.walk import IngestReport

# Hybrid: each retriever contributes its top documents to the fusion.
_FUSION_DEPTH = 200
# The keyword leg's convex weight (the semantic leg's is 1 minus it), chosen on the train
# splits (bench/fusion_grid.py): SciFact train 0.7365 at 0.5; CJK queries lean on their
# bigram BM25 (CMRC trial: keyword alone 0.9769, 0.9724 at 0.5, 0.9791 at 0.7).
KEYWORD_WEIGHT = 0.5
CJK_KEYWORD_WEIGHT = 0.7
# A query is in the scripts that hold at least this share of its letters: a Greek letter
# in an English claim ("TNF-α", "αvβ8": 22 of the 1,109 SciFact claims) must not make
# the store think the embedder cannot read it, while "iPhone 价格" (a quarter CJK) is CJK.
SCRIPT_SHARE = 0.2


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
        # The one write path: add, write_many, update, workspaces and ingest all use it.
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
        self.backend.warm()

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
        rows = enrichments(self)
        return None if rows is None else rows.get(doc_id)

    def settings(self, **changes: str | None) -> dict[str, str]:
        """The store's own defaults (kept in the file), after applying ``changes``:
        ``expand`` (``llm`` or ``off``) and ``enrich`` (``on`` or ``off``)."""
        return agent_settings(self, **changes)

    # --- writing: the bodies are in trove/store_writes.py -------------------------

    add = store_writes.add
    add_many = store_writes.add_many
    write_many = store_writes.write_many
    delete = store_writes.delete
    restore = store_writes.restore
    purge = store_writes.purge
    clear = store_writes.clear
    transaction = store_writes.transaction
    reembed = store_writes.reembed
    update = store_writes.update

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
        if rerank is not None:
            rank = memory_rank.parse(rerank)
            wide = self.search(
                query,
                mode=mode,
                limit=memory_rank.depth(limit) if isinstance(limit, int) else limit,
                raw=raw,
                explain=explain,
                expand=0,
                variants=variants,
                vector=vector,
                record_access=False,
                **filters,
            )
            found = SearchResults(memory_rank.apply(wide, rank, now(), limit, explain))
        elif vector is not None:
            where = Filters.build(**filters)
            found = SearchResults(own_vectors.search(self, vector, where, limit, explain))
        elif variants or expand == "llm":
            from trove.agent import search_variants

            options = dict(filters, mode=mode, raw=raw)
            found = search_variants(
                self,
                with_enrichment(self, self._search),
                query,
                variants,
                llm=expand == "llm",
                limit=limit,
                explain=explain,
                **options,
            )
        else:
            found = SearchResults(
                with_enrichment(self, self._search)(
                    query, mode=mode, limit=limit, raw=raw, explain=explain, **filters
                )
            )
        if isinstance(expand, int) and expand > 0 and found:
            found.extend(self._linked(found, Filters.build(**filters), expand, now()))
        found[:] = budget.finish(
            self.backend, [h for h in found if budgeted.passes(h.score, h)], budgeted
        )
        if self.record_retrievals:
            for hit in found:
                self.events.emit_hit("retrieved", hit)
        if record_access:
            self.access.note(h.doc_id for h in found)
        return found

    @property
    def clusters(self) -> Clusters:
        """Named groups of memories with a rolling summary and a decision log: see
        :mod:`trove.memory.clusters`."""
        return Clusters(self)

    def _has_duplicates(self) -> bool:
        return self.backend.get_meta(canonical.META_KEY) is not None

    def canonicalize(self, **options: Any) -> list[canonical.DuplicateGroup]:
        """Fold near-duplicates into canonical documents (reversible, nothing deleted):
        ``threshold``, ``text_threshold``, ``namespace``, ``rule``, ``dry_run``; see
        :mod:`trove.memory.canonical`."""
        return canonical.canonicalize(self, **options)

    def uncanonicalize(self, namespace: str = "default") -> int:
        """Undo :meth:`canonicalize` in a namespace; returns how many it unmarked."""
        return canonical.uncanonicalize(self, namespace=namespace)

    def _search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int = 10,
        raw: bool = False,
        explain: bool = False,
        **filters: Any,
    ) -> builtins.list[Hit]:
        """One query, one ranking: :meth:`search` without variants, vectors or links."""
        mode = mode or ("hybrid" if self.has_embedder else "keyword")
        if mode not in MODES:
            known = ", ".join(MODES)
            raise InvalidQuery(f"unknown mode {reprlib.repr(mode)}; use one of: {known}")
        if mode != "keyword" and not self.has_embedder:
            why = (
                "this store is keyword-only (made without an embedder; switch with "
                "`trove reembed --embedder NAME`)"
                if self.vectors.keyword_only
                else "this store was opened with embedder=None"
            )
            raise InvalidQuery(f"{mode} search needs an embedder; {why}")
        validate.count(limit, "limit", 0, validate.MAX_LIMIT, InvalidQuery)
        where = Filters.build(**filters)
        validate.string(query, "query", InvalidQuery)
        parsed, dropped = bounded(parse(query, raw=raw), self.backend.term_counts)
        if not query.strip() or limit == 0 or (parsed.empty and mode == "keyword"):
            return []
        stamp = now()
        scripts = scripts_of(query, min_share=SCRIPT_SHARE)
        weights = self._weights(scripts, mode)
        used = {name for name, weight in weights.items() if weight > 0}
        if used == {"keyword"}:  # also hybrid for a script the embedder does not know
            lists = {"keyword": self.backend.keyword_search(parsed, where, limit, stamp)}
        elif used == {"semantic"}:
            lists = {"semantic": self._semantic(query, where, limit, stamp)}
        else:
            lists = self._both(query, parsed, where, stamp)
        method = self.fusion if len(lists) > 1 else "single"
        fused = fuse(lists, weights, method=method, limit=limit)
        model_id = self.vectors.resolve().model_id if "semantic" in lists else None
        docs = self.backend.get_documents([f.doc_id for f in fused])
        info = calibration.query_info(parsed.words, parsed.cjk, "cjk" in scripts)
        texts = calibration.document_texts(self.backend.get_document, docs)
        key, rows, scores = calibration.calibrate(fused, lists, info, model_id, texts)
        kept = zip(fused, scores, rows, strict=True)
        snippets = self.backend.snippets(parsed, [f.chunk_id for f in fused])
        hits = [
            _hit(
                docs[f.doc_id],
                score,
                snippet_text.clean(snippets.get(f.chunk_id, "")),
                f.chunk,
                f.explain(method, weights, dropped, key, row) if explain else None,
            )
            for f, score, row in kept
        ]
        return hits

    def _linked(
        self, hits: builtins.list[Hit], where: Filters, depth: int, stamp: float
    ) -> builtins.list[Hit]:
        """Documents reachable from the hits over edges, breadth first, each once."""
        seen = {h.doc_id for h in hits}
        frontier = {h.doc_id: h.score for h in hits}
        found: builtins.list[Hit] = []
        for _ in range(depth):
            if not frontier:
                break
            reached: dict[str, tuple[float, dict[str, Any]]] = {}
            for edge in self.backend.edges_of(builtins.list(frontier), None):
                for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                    if here in frontier and there not in seen and there not in reached:
                        via = {"doc_id": here, "type": edge.type, "weight": edge.weight}
                        score = min(1.0, frontier[here] * edge.weight)
                        reached[there] = (score, via)
            allowed = self.backend.visible(builtins.list(reached), where, stamp)
            frontier = {}
            for doc_id, (score, via) in reached.items():
                doc = self.backend.get_document(doc_id) if doc_id in allowed else None
                if doc is None:
                    continue
                seen.add(doc_id)
                frontier[doc_id] = score
                chunk = Chunk(index=0, start=0, end=len(doc.text))
                found.append(
                    replace(
                        _hit(doc, score, snippet.make(doc.text[:400], []), chunk, None),
                        linked_from=via,
                    )
                )
        return found

    def _both(
        self, query: str, parsed: ParsedQuery, where: Filters, stamp: float
    ) -> dict[str, builtins.list[ChunkHit]]:
        # The query is embedded on another thread while the keyword leg ranks (the model
        # and SQLite release the GIL); not inside kb.transaction(), whose thread holds the
        # connection the other thread would wait for.
        if atomic.active(self):
            keyword = (
                []
                if parsed.empty
                else self.backend.keyword_search(parsed, where, _FUSION_DEPTH, stamp)
            )
            return {
                "keyword": keyword,
                "semantic": self._semantic(query, where, _FUSION_DEPTH, stamp),
            }
        semantic = self._pool.submit(self._semantic, query, where, _FUSION_DEPTH, stamp)
        keyword = (
            []
            if parsed.empty
            else self.backend.keyword_search(parsed, where, _FUSION_DEPTH, stamp)
        )
        return {"keyword": keyword, "semantic": semantic.result()}

    def _semantic(
        self, query: str, where: Filters, limit: int, stamp: float
    ) -> builtins.list[ChunkHit]:
        found = self.vectors.query(query)
        if found is None:
            return []
        lock, vector = found
        return self.backend.vector_search(lock, vector, where, limit, stamp)

    def _weights(self, scripts: frozenset[str], mode: str) -> dict[str, float]:
        """Fusion weights; the embedder gets none for a query in a script it does not know."""
        if mode != "hybrid":
            return {mode: 1.0}
        known = self.vectors.resolve().languages
        if known is not None and not scripts <= known:
            return {"keyword": 1.0, "semantic": 0.0}
        if self.fusion == "rrf":
            return {"keyword": 1.0, "semantic": 1.0}
        weight = self.keyword_weight
        if weight is None:
            weight = CJK_KEYWORD_WEIGHT if "cjk" in scripts else KEYWORD_WEIGHT
        return {"keyword": weight, "semantic": round(1.0 - weight, 9)}  # 0.3, not 0.30...04

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
        an ``IngestProgress``). See :func:`trove.ingest.walk.ingest`.
        """
        from trove.ingest.walk import ingest

        return ingest(self, path, **options)

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


def _expired(doc: Document) -> bool:
    expires = to_epoch(doc.expires_at)
    return expires is not None and expires <= now()


def _hit(
    doc: Document, score: float, snippet: str, chunk: Any, explain: dict[str, Any] | None
) -> Hit:
    return Hit(
        doc_id=doc.id,
        score=score,
        title=doc.title,
        source=doc.source,
        source_id=doc.source_id,
        snippet=snippet,
        chunk=chunk,
        namespace=doc.namespace,
        doc_type=doc.doc_type,
        author=doc.author,
        participants=doc.participants,
        timestamp=doc.timestamp,
        url=doc.url,
        thread_id=doc.thread_id,
        channel=doc.channel,
        tags=doc.tags,
        metadata=doc.metadata,
        scope=doc.scope,
        importance=doc.importance,
        explain=explain,
        confidence=doc.confidence,
        entities=doc.entities,
        access_count=doc.access_count,
        last_accessed=doc.last_accessed,
        created_at=doc.created_at,
    )
