"""Hybrid search: one query, one ranking, from a backend's keyword index and an
embedder's vectors, fused and calibrated; and the documents linked to the hits.

:class:`HybridSearch` works on the parts a store hands it (:class:`SearchParts`: its
backend, its vectors, its fusion settings), never on the store itself, so search/ knows
no backend and no store. ``Store.search`` is the public entry: it adds variants,
enrichment, reranking and the token budget around :meth:`HybridSearch.search`.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from trove.embedders.base import Embedder, scripts_of
from trove.errors import InvalidQuery
from trove.hits import ChunkHit, Hit, HitDetails, Shown
from trove.models import DOCUMENT_FIELDS, MODES, Chunk, Document, Edge, assemble
from trove.search import calibration, deadline, exact, passage, snippet
from trove.search.bounds import bounded
from trove.search.filters import Filters
from trove.search.fusion import Fused, fuse, prior
from trove.search.query import ParsedQuery, parse
from trove.timeutil import now

if TYPE_CHECKING:  # only the type: a keyword search starts no thread pool
    from concurrent.futures import Future

    from trove.search.request import SearchRequest

# Hybrid: each retriever contributes its top documents to the fusion.
FUSION_DEPTH = 200
# The keyword leg's convex weight (the semantic leg's is 1 minus it), chosen on the train
# splits (bench/fusion_grid.py): SciFact train 0.7365 at 0.5; CJK queries lean on their
# bigram BM25 (CMRC trial: keyword alone 0.9769, 0.9724 at 0.5, 0.9791 at 0.7).
KEYWORD_WEIGHT = 0.5
CJK_KEYWORD_WEIGHT = 0.7
# A query is in the scripts that hold at least this share of its letters: a Greek letter
# in an English claim ("TNF-α", "αvβ8": 22 of the 1,109 SciFact claims) must not make
# the store think the embedder cannot read it, while "iPhone 价格" (a quarter CJK) is CJK.
SCRIPT_SHARE = 0.2


class SearchBackend(Protocol):
    """What search asks of a backend (a part of ``trove.backends.base.Backend``)."""

    def term_counts(self, words: Sequence[str]) -> dict[str, int]: ...
    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]: ...
    def vector_search(
        self, lock: Any, query: Any, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]: ...
    def vector_search_many(
        self, lock: Any, queries: Any, filters: Filters, limits: Sequence[int], now: float
    ) -> list[list[ChunkHit]]: ...
    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None: ...
    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]: ...
    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]: ...
    def hit_details(
        self, query: ParsedQuery, hits: Sequence[tuple[str, int]], chars: int
    ) -> HitDetails: ...
    def edges_of(self, doc_ids: Sequence[str], type: str | None) -> list[Edge]: ...


class ShownKnn(Protocol):
    """A backend whose k-NN reads what search shows of its hits (``hit_details``) in its
    own statement: PostgreSQL, where that is a semantic search's round trip less. Known by
    the method (:meth:`HybridSearch.semantic_shown`); any other backend is asked after."""

    def vector_search_shown(
        self,
        lock: Any,
        query: Any,
        filters: Filters,
        limit: int,
        now: float,
        shown: tuple[ParsedQuery, int],
    ) -> tuple[list[ChunkHit], HitDetails]: ...


class Pool(Protocol):
    """Where a hybrid search embeds the query while its keyword leg ranks (the store's
    SearchPool, or any executor)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]: ...


class QueryVectors(Protocol):
    """The store's embedder, as search uses it (``trove.embedders.vectorizer``)."""

    @property
    def keyword_only(self) -> bool: ...
    @property
    def callers_own(self) -> bool: ...
    def resolve(self) -> Embedder: ...
    def query(self, text: str) -> tuple[Any, Any] | None: ...


class SearchParts(Protocol):
    """The parts of a store that search works on, read at each search (a closed store
    swaps its backend)."""

    @property
    def backend(self) -> SearchBackend: ...
    @property
    def vectors(self) -> QueryVectors: ...
    @property
    def has_embedder(self) -> bool: ...
    @property
    def fusion(self) -> str: ...
    @property
    def keyword_weight(self) -> float | None: ...


class HybridSearch:
    """Keyword, semantic or hybrid search over one store's parts. ``pool`` embeds the
    query while the keyword leg ranks, except while ``inline()`` (a transaction is open
    on this thread, whose connection the other thread would wait for)."""

    def __init__(self, parts: SearchParts, pool: Pool, inline: Callable[[], bool]) -> None:
        self.parts = parts
        self.pool = pool
        self.inline = inline

    def search(self, request: SearchRequest) -> list[Hit]:
        """One query, one ranking: ``Store.search`` without variants, vectors or links
        (the request's ``rerank``, ``vector``, ``variants`` and ``expand`` are not read)."""
        mode = self.resolve_mode(request.mode)
        query, limit, where = request.query, request.limit, request.filters
        backend = self.parts.backend
        parsed, dropped = bounded(parse(query, raw=request.raw), backend.term_counts)
        if not query.strip() or limit == 0 or (parsed.empty and mode == "keyword"):
            return []
        stamp = now()
        scripts = scripts_of(query, min_share=SCRIPT_SHARE)
        weights = self.weights(scripts, mode)
        used = {name for name, weight in weights.items() if weight > 0}
        details = None  # what search shows of the hits, when the k-NN read it
        if used == {"keyword"}:  # also hybrid for a script the embedder does not know
            lists = {"keyword": backend.keyword_search(parsed, where, limit, stamp)}
        elif used == {"semantic"}:
            found, details = self.semantic_shown(query, parsed, where, limit, stamp)
            lists = {"semantic": found}
        else:
            lists = self.both(query, parsed, where, stamp)
        method = self.parts.fusion if len(lists) > 1 else "single"
        adaptive = self.parts.keyword_weight is None  # a weight the caller set stays fixed
        deadline.check()  # before the hits' snippets and calibration are read
        fused = fuse(lists, weights, method=method, limit=limit, adaptive=adaptive)
        asked = exact.phrases(query, parsed)
        info = calibration.query_info(parsed.words, parsed.cjk, "cjk" in scripts, asked)
        how = (method, weights, dropped, request.explain)
        return self.hits(parsed, fused, lists, info, how, details)

    def resolve_mode(self, mode: str | None) -> str:
        """``mode``, or the store's default, checked (search/phrasings.py builds on it)."""
        mode = mode or ("hybrid" if self.parts.has_embedder else "keyword")
        if mode not in MODES:
            known = ", ".join(MODES)
            raise InvalidQuery(f"unknown mode {reprlib.repr(mode)}; use one of: {known}")
        if mode != "keyword" and not self.parts.has_embedder:
            if self.parts.vectors.keyword_only:
                why = (
                    "this store is keyword-only (made without an embedder; switch with "
                    "`trove reembed --embedder NAME`)"
                )
            elif self.parts.vectors.callers_own:
                why = "this store's vectors are its callers' own: search with vector=[...]"
            else:
                why = "this store was opened with embedder=None"
            raise InvalidQuery(f"{mode} search needs an embedder; {why}")
        return mode

    def hits(
        self,
        parsed: ParsedQuery,
        fused: list[Fused],
        lists: dict[str, list[ChunkHit]],
        info: calibration.QueryInfo,
        how: tuple[str, dict[str, float], tuple[str, ...], bool],
        details: HitDetails | None = None,
    ) -> list[Hit]:
        """The fused documents as calibrated hits with snippets (and ``explain``); also
        how search/phrasings.py finishes the several phrasings' fused legs. ``details``:
        what search shows of them, if already read (one list's hits are the fused ones)."""
        method, weights, dropped, explain = how
        backend = self.parts.backend
        model_id = self.parts.vectors.resolve().model_id if "semantic" in lists else None
        if details is None:
            read = [(f.doc_id, f.chunk_id) for f in fused]
            details = backend.hit_details(parsed, read, calibration.COVERAGE_CHARS)
        docs = details.documents
        texts = calibration.titled(docs, details.texts)
        key, rows, scores = calibration.calibrate(fused, lists, info, model_id, texts)
        kept = zip(fused, scores, rows, strict=True)
        # Each document's passage, the chunk whose text matches best, and its snippet:
        # chosen when the first hit's is read (search/passage.py).
        shown = passage.Shown(details.passages, {f.doc_id: (f.chunk_id, f.chunk) for f in fused})
        return [
            deferred_hit(
                docs[f.doc_id],
                score,
                shown,
                f.explain(method, weights, dropped, key, row) if explain else None,
            )
            for f, score, row in kept
        ]

    def linked(self, hits: list[Hit], where: Filters, depth: int, stamp: float) -> list[Hit]:
        """Documents reachable from the hits over edges, breadth first, each once."""
        backend = self.parts.backend
        seen = {h.doc_id for h in hits}
        frontier = {h.doc_id: h.score for h in hits}
        found: list[Hit] = []
        for _ in range(depth):
            if not frontier:
                break
            reached: dict[str, tuple[float, dict[str, Any]]] = {}
            for edge in backend.edges_of(list(frontier), None):
                for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                    if here in frontier and there not in seen and there not in reached:
                        via = {"doc_id": here, "type": edge.type, "weight": edge.weight}
                        score = min(1.0, frontier[here] * edge.weight)
                        reached[there] = (score, via)
            allowed = backend.visible(list(reached), where, stamp)
            frontier = {}
            for doc_id, (score, via) in reached.items():
                doc = backend.get_document(doc_id) if doc_id in allowed else None
                if doc is None:
                    continue
                seen.add(doc_id)
                frontier[doc_id] = score
                chunk = Chunk(index=0, start=0, end=len(doc.text))
                found.append(
                    replace(
                        document_hit(doc, score, snippet.make(doc.text[:400], []), chunk, None),
                        linked_from=via,
                    )
                )
        return found

    def both(
        self, query: str, parsed: ParsedQuery, where: Filters, stamp: float
    ) -> dict[str, list[ChunkHit]]:
        """Both legs, each its top ``FUSION_DEPTH`` documents."""
        # The query is embedded on another thread while the keyword leg ranks (the model
        # and SQLite release the GIL); not inside kb.transaction(), whose thread holds the
        # connection the other thread would wait for, nor with a model that holds the GIL
        # (Embedder.releases_gil): the two threads would take turns at it.
        pending = None
        if self.legs_apart():
            semantic = deadline.carried(self.semantic)
            pending = self.pool.submit(semantic, query, where, FUSION_DEPTH, stamp)
        backend = self.parts.backend
        keyword = (
            [] if parsed.empty else backend.keyword_search(parsed, where, FUSION_DEPTH, stamp)
        )
        if pending is None:
            return {
                "keyword": keyword,
                "semantic": self.semantic(query, where, FUSION_DEPTH, stamp),
            }
        return {"keyword": keyword, "semantic": pending.result()}

    def legs_apart(self) -> bool:
        """Whether the semantic leg runs on the pool while the keyword leg ranks: not
        inside a transaction (see the class), nor with an embedder that holds the GIL
        (the two legs would take turns at it)."""
        return not self.inline() and self.parts.vectors.resolve().releases_gil

    def semantic(self, query: str, where: Filters, limit: int, stamp: float) -> list[ChunkHit]:
        found = self.query_vector(query)
        if found is None:
            return []
        return self.parts.backend.vector_search(*found, where, limit, stamp)

    def semantic_shown(
        self, query: str, parsed: ParsedQuery, where: Filters, limit: int, stamp: float
    ) -> tuple[list[ChunkHit], HitDetails | None]:
        """:meth:`semantic`, and what search shows of its hits where the backend's k-NN
        reads that in its own statement (:class:`ShownKnn`); else None."""
        backend = self.parts.backend
        # hasattr, not isinstance: a runtime protocol check costs 8 us a search.
        if not hasattr(backend, "vector_search_shown"):
            return self.semantic(query, where, limit, stamp), None
        found = self.query_vector(query)
        if found is None:
            return [], None
        shown = (parsed, calibration.COVERAGE_CHARS)
        return cast(ShownKnn, backend).vector_search_shown(*found, where, limit, stamp, shown)

    def query_vector(self, query: str) -> tuple[Any, Any] | None:
        """The embedder's lock and the query's vector (None: no vectors to search)."""
        with deadline.paused():  # the embedder's time is not the search's (deadline.py)
            return self.parts.vectors.query(query)

    def weights(self, scripts: frozenset[str], mode: str) -> dict[str, float]:
        """Fusion weights; the embedder gets none for a query in a script it does not know."""
        if mode != "hybrid":
            return {mode: 1.0}
        model = self.parts.vectors.resolve()
        if model.languages is not None and not scripts <= model.languages:
            return {"keyword": 1.0, "semantic": 0.0}
        if self.parts.fusion == "rrf":
            return {"keyword": 1.0, "semantic": 1.0}
        weight = self.parts.keyword_weight
        if weight is None:
            weight = CJK_KEYWORD_WEIGHT if "cjk" in scripts else KEYWORD_WEIGHT
            weight = prior(model.model_id, scripts, weight)  # the model's, if fitted
        return {"keyword": weight, "semantic": round(1.0 - weight, 9)}  # 0.3, not 0.30...04


def document_hit(
    doc: Document, score: float, snippet: str, chunk: Any, explain: dict[str, Any] | None
) -> Hit:
    """A hit on ``doc`` carrying its provenance fields."""
    values = {name: getattr(doc, name) for name in _CARRIED}
    values.update(
        _HIT_DEFAULTS, doc_id=doc.id, score=score, snippet=snippet, chunk=chunk, explain=explain
    )
    return assemble(Hit, values)


def deferred_hit(doc: Document, score: float, shown: Shown, explain: dict[str, Any] | None) -> Hit:
    """A hit on ``doc`` whose chunk and snippet ``shown`` gives when first read (made
    without them: :class:`~trove.hits.Hit` asks ``_shown`` at their first reading)."""
    values = {name: getattr(doc, name) for name in _CARRIED}
    values.update(_HIT_DEFAULTS, doc_id=doc.id, score=score, explain=explain, _shown=shown)
    return assemble(Hit, values)


# The document's fields a hit carries (its text is its chunk's, set when asked for), and
# the hit's own that a search leaves at their defaults.
_CARRIED = tuple(f.name for f in fields(Hit) if f.name in DOCUMENT_FIELDS and f.name != "text")
_HIT_DEFAULTS = {
    f.name: f.default
    for f in fields(Hit)
    if f.name not in {*_CARRIED, "doc_id", "score", "snippet", "chunk", "explain"}
}
