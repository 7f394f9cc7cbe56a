"""LLM query expansion: a configured chat model rewrites a query into a few keyword and
paraphrase variants (and a short hypothetical answer for the semantic leg), cached in the
store per normalized query and model, so each distinct query costs one call.

Nothing here ever fails a search: a missing, slow or broken model leaves the plain
query's results, marked ``degraded``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from trove.llm import ChatModel, LLMError, strings
from trove.search.phrasings import embed
from trove.search.variants import MAX_VARIANTS, Variant, normalize

if TYPE_CHECKING:
    import numpy as np

    from trove.parts import Agentive
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

CACHE_PREFIX = "llm.expand:"
# Cached expansions this process has read, decoded (an entry never changes once stored:
# one per model and normalized query), so a repeated query reads no row: a cached
# expansion costs a search (bench/agent_loop.py) little more than its plain search.
MEMO_SIZE = 1024
# The variants' query vectors, per expansion and embedding model: embedding five phrasings
# would cost a cached expansion five times a plain search's one embedding.
VECTORS_PREFIX = "llm.expand.vectors:"
# Few: each variant is one more search; three keyword and two paraphrase ones covered
# the phrasings the designs this follows use.
KEYWORD_VARIANTS = 3
PARAPHRASES = 2
SYSTEM = """\
You rewrite search queries for a document search engine that matches words (BM25) and \
meaning (embeddings). Answer with one JSON object and nothing else: \
{"keywords": [up to 3 short keyword queries: the key terms, synonyms, expanded \
abbreviations], "paraphrases": [up to 2 rephrasings of the whole question], \
"passage": "two sentences that a document answering the query might contain"}. \
Keep the query's language."""


@dataclass(frozen=True)
class Expansion:
    """The variants to search (``vectors``: their query vectors, by text, when searched
    by meaning), or why there are none (``error``)."""

    variants: tuple[Variant, ...] = ()
    error: str | None = None
    cached: bool = False
    vectors: Mapping[str, Any] = field(default_factory=dict)


def cache_key(model_id: str, query: str) -> str:
    digest = hashlib.sha256(f"{model_id}\x00{normalize(query)}".encode()).hexdigest()
    return CACHE_PREFIX + digest[:32]


def expand(store: Agentive, query: str, *, semantic: bool) -> Expansion:
    """Variants of ``query`` from the store's model (cached); never raises."""
    model = store.llm
    if model is None:
        return Expansion(error="no LLM configured (set TROVE_LLM)")
    key = cache_key(model.model_id, query)
    memo: dict[tuple[str, str], Expansion] = store.memos.expansions
    # The vectors are the embedder's: a store re-embedded by another model needs others.
    slot = (key, store.vectors.resolve().model_id if semantic else "")
    known = memo.get(slot)
    if known is not None:
        store.expansion_counts.count("hits")
        return known
    try:
        stored = store.backend.get_meta(key)
    except Exception as exc:  # a busy store must not fail the search either
        return Expansion(error=f"expansion cache unreadable: {exc}")
    if stored is not None:
        store.expansion_counts.count("hits")
        variants = _variants(query, json.loads(stored), semantic)
        found = Expansion(variants, cached=True, vectors=vectors(store, key, variants, semantic))
        return _remember(memo, slot, found, semantic)
    store.expansion_counts.count("misses")
    try:
        answer = ask(model, query)
    except LLMError as exc:
        store.expansion_counts.count("failures")
        return Expansion(error=str(exc))
    # Not cached is only a cost (a busy store); the answer is still good.
    with contextlib.suppress(Exception):
        store.backend.set_meta(key, json.dumps(answer, ensure_ascii=False))
    variants = _variants(query, answer, semantic)
    found = Expansion(variants, vectors=vectors(store, key, variants, semantic))
    _remember(memo, slot, replace(found, cached=True), semantic)  # as the next read finds it
    return found


def _remember(
    memo: dict[tuple[str, str], Expansion], slot: tuple[str, str], found: Expansion, semantic: bool
) -> Expansion:
    if not semantic or found.vectors:  # else the vectors were not to be had: retry
        if len(memo) >= MEMO_SIZE:
            memo.pop(next(iter(memo)))
        memo[slot] = found
    return found


def vectors(
    store: Agentive, key: str, variants: Sequence[Variant], semantic: bool
) -> dict[str, Any]:
    """Query vectors of the variants searched by meaning, cached beside the expansion
    (``key``) per embedding model; {} for a search not ``semantic``. Never raises: a variant
    without one is embedded by the search."""
    texts = [v.query for v in variants if v.mode in (None, "semantic")]
    if not semantic or not texts:
        return {}
    try:
        embedder = store.vectors.resolve()
        vector_key = VECTORS_PREFIX + key[len(CACHE_PREFIX) :] + ":" + embedder.model_id
        known = _decoded(store.backend.get_meta(vector_key))
        missing = embed(embedder, texts, known)
        if missing:
            known.update(missing)
            store.backend.set_meta(vector_key, _encoded(known))
        return known
    except Exception:  # a busy store or an embedder error: the search embeds them
        return {}


def _encoded(vectors: Mapping[str, Any]) -> str:
    matrix = np.asarray(list(vectors.values()), dtype=np.float32)
    data = base64.b64encode(matrix.tobytes()).decode("ascii")
    return json.dumps({"texts": list(vectors), "data": data}, ensure_ascii=False)


def _decoded(stored: str | None) -> dict[str, Any]:
    if stored is None:
        return {}
    row = json.loads(stored)
    texts = row["texts"]
    matrix = np.frombuffer(base64.b64decode(row["data"]), dtype=np.float32)
    return dict(zip(texts, matrix.reshape(len(texts), -1), strict=True)) if texts else {}


def ask(model: ChatModel, query: str) -> dict[str, Any]:
    """The model's variants of ``query``, as the cache keeps them."""
    reply = model.json(SYSTEM, query)
    passage = reply.get("passage")
    return {
        "keywords": strings(reply.get("keywords"), KEYWORD_VARIANTS),
        "paraphrases": strings(reply.get("paraphrases"), PARAPHRASES),
        "passage": passage.strip() if isinstance(passage, str) else "",
    }


def _variants(query: str, answer: dict[str, Any], semantic: bool) -> tuple[Variant, ...]:
    seen = {normalize(query)}
    found: list[Variant] = []
    for text in [*answer.get("keywords", []), *answer.get("paraphrases", [])]:
        if normalize(text) not in seen and len(found) < MAX_VARIANTS:
            seen.add(normalize(text))
            found.append(Variant(text, None, "llm"))
    passage = answer.get("passage") or ""
    if semantic and passage and len(found) < MAX_VARIANTS:
        # A hypothetical answer reads like the documents sought: it is matched by meaning
        # only (its words are the model's guesses, not the user's).
        found.append(Variant(passage, "semantic", "passage"))
    return tuple(found)
