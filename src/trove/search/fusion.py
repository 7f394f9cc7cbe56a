"""Fusing two retrievers' ranked documents into one list.

Fusion is by a convex combination of z-scored scores over each retriever's top 200, or
by reciprocal rank (RRF, k=60). Chosen on each language's train split
(bench/fusion_grid.py): z-scores over min-max for Latin-script queries (SciFact train
0.7365 vs 0.7354, keyword weight 0.5) and for CJK queries (CMRC trial 0.9791 at keyword
weight 0.7 vs min-max's best, 0.9780 at 0.8; the weights are in search/hybrid.py); RRF
was lower on both (0.7149, 0.9143).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trove.hits import ChunkHit
from trove.models import FUSIONS as FUSIONS
from trove.models import Chunk

RRF_K = 60


@dataclass
class Fused:
    """One document after fusion, with each retriever's rank and score kept for explain."""

    doc_id: str
    chunk_id: int
    chunk: Chunk
    score: float = 0.0
    parts: dict[str, dict[str, float]] = field(default_factory=dict)
    # The weights this query's fusion used, when adapted to it (:func:`adapt`).
    query_weights: dict[str, float] | None = None

    def explain(
        self,
        fusion: str,
        weights: dict[str, float],
        dropped: Sequence[str] = (),
        calibration: str = "",
        features: Sequence[float] = (),
    ) -> dict[str, Any]:
        """The legs' raw ranks and scores, the fused (uncalibrated) score, what the
        calibration saw (its model and feature vector, for bench/calibrate.py), and the
        query words a long query left out (``dropped_terms``)."""
        extra: dict[str, Any] = {"dropped_terms": list(dropped)} if dropped else {}
        if self.query_weights is not None:
            extra["query_weights"] = self.query_weights
        return {
            "fusion": fusion,
            "weights": weights,
            **self.parts,
            "raw_score": self.score,
            "calibration": {"model": calibration, "features": list(features)},
            **extra,
        }


def fuse(
    lists: dict[str, list[ChunkHit]],
    weights: dict[str, float],
    *,
    method: str = "convex",
    limit: int = 10,
    adaptive: bool = False,
) -> list[Fused]:
    """Merge ranked document lists (name -> hits, best first) into one.

    ``method`` is ``convex`` (weighted sum of z-scores; a document missing from a list
    gets that list's lowest), ``rrf``, or ``single`` (one list, scores kept); with
    ``adaptive``, convex weights are this query's (:func:`adapt`), kept on each result.
    The chunk shown for a document is the one from the first list that has it (keyword
    first, so the snippet shows the words that matched).
    """
    used = None
    if adaptive and method == "convex" and set(lists) == {"keyword", "semantic"}:
        weights = used = adapt(lists, weights)
    # Scores in plain dicts: a hybrid search fuses two lists of 200, and only the top
    # ``limit`` become Fused (with their parts), so a deep fusion costs little more.
    scores: dict[str, float] = {}
    shown: dict[str, ChunkHit] = {}
    floors: dict[str, float] = {}
    for name, hits in lists.items():
        weight = weights.get(name, 0.0)
        if method == "single":
            values = [h.score for h in hits]
        elif method == "rrf":
            values = [weight / (RRF_K + rank) for rank in range(1, len(hits) + 1)]
        else:
            normalized = zscore([h.score for h in hits])
            floors[name] = weight * min(normalized, default=0.0)
            values = [weight * norm for norm in normalized]
        for hit, value in zip(hits, values, strict=True):
            doc_id = hit.doc_id
            if doc_id not in scores:
                shown[doc_id] = hit
                scores[doc_id] = value if method == "single" else 0.0 + value
            else:
                scores[doc_id] = value if method == "single" else scores[doc_id] + value
    ranks = {
        name: {h.doc_id: rank for rank, h in enumerate(hits, 1)} for name, hits in lists.items()
    }
    if method == "convex":
        _add_floors(scores, floors, ranks)
    # Best first, ties by id (ids are unique, so the order is total).
    top = [
        (doc_id, -minus)
        for minus, doc_id in heapq.nsmallest(
            limit, [(-score, doc_id) for doc_id, score in scores.items()]
        )
    ]
    fused = []
    for doc_id, score in top:
        hit = shown[doc_id]
        parts = {
            name: {
                "rank": ranks[name][doc_id],
                "score": lists[name][ranks[name][doc_id] - 1].score,
            }
            for name in lists
            if doc_id in ranks[name]
        }
        fused.append(Fused(doc_id, hit.chunk_id, hit.chunk, score, parts, used))
    return fused


def _add_floors(
    scores: dict[str, float], floors: dict[str, float], ranks: dict[str, dict[str, int]]
) -> None:
    """A document missing from a list gets that list's lowest (z-scored, weighted) score."""
    missing: dict[str, list[float]] = {}
    for name, floor in floors.items():
        for doc_id in scores.keys() - ranks[name].keys():
            missing.setdefault(doc_id, []).append(floor)
    for doc_id, found in missing.items():
        scores[doc_id] = scores[doc_id] + sum(found)


def zscore(scores: Sequence[float]) -> list[float]:
    """Scores in standard deviations from their list's mean: comparable across retrievers
    whose scales differ (BM25 is unbounded, cosine lies in [-1, 1])."""
    if not scores:
        return []
    mean = sum(scores) / len(scores)
    spread = (sum([(s - mean) ** 2 for s in scores]) / len(scores)) ** 0.5
    if spread == 0:
        return [0.0] * len(scores)
    return [(s - mean) / spread for s in scores]


# Per-query weights (fitted by `python bench/fusion_adapt.py fit` on the train splits).
# A query starts from its embedder's prior for its script (PRIORS: how well that model
# reads the script, against the keyword leg; the script's default weight for a model not
# listed), then the keyword leg's weight moves, in log-odds, by these slopes times each
# feature's distance from its train-split centre, in units of its train-split spread.
# USE multilingual reads English science claims far worse than BM25 does (SciFact train,
# 1,500 docs: semantic 0.5622, keyword 0.7736), so its Latin prior is 0.7: test 0.7905
# vs keyword 0.7849, where the script's 0.5 gave 0.7699. No slopes helped every train
# pair at once (the fit maximises the smallest gain), so they are zero (and the centre
# and spread are left neutral).
PRIORS: dict[tuple[str, str], float] = {
    ("all-MiniLM-L6-v2-int8", "latin"): 0.5,
    ("use-multilingual-v3", "cjk"): 0.7,
    ("use-multilingual-v3", "latin"): 0.7,
}
ADAPTIVE_FEATURES = ("keyword_top", "semantic_top", "overlap")
ADAPTIVE_CENTRE = (0.0, 0.0, 0.0)
ADAPTIVE_SPREAD = (1.0, 1.0, 1.0)
ADAPTIVE_SLOPES = (0.0, 0.0, 0.0)
# Neither leg is ever silenced by adaptation alone (a script the embedder does not read
# is, before it): its weight stays in [0.05, 0.95].
ADAPTIVE_BOUND = 0.05


def prior(model_id: str, scripts: frozenset[str], default: float) -> float:
    """The keyword weight a query in ``scripts`` starts from with the embedder
    ``model_id``: its fitted prior, or ``default`` (the script's weight)."""
    return PRIORS.get((model_id, script_group(scripts)), default)


def script_group(scripts: frozenset[str]) -> str:
    """The script a prior is fitted for: ``cjk`` for a query with CJK in it, else its
    scripts joined (``latin``, ``cyrillic``, ``greek+latin``)."""
    return "cjk" if "cjk" in scripts else "+".join(sorted(scripts))


def query_features(lists: dict[str, list[ChunkHit]]) -> tuple[float, ...]:
    """What says how far to trust each leg on this query, scale-free (the same for any
    embedding model): each leg's top hit in standard deviations above its list's mean
    (a clear winner or a flat list), and the share of the keyword leg's top 10 that the
    semantic leg's top 10 holds (the legs agree)."""
    keyword, semantic = lists["keyword"], lists["semantic"]
    tops = [max(zscore([h.score for h in leg]), default=0.0) for leg in (keyword, semantic)]
    shared = {h.doc_id for h in keyword[:10]} & {h.doc_id for h in semantic[:10]}
    return (tops[0], tops[1], len(shared) / 10)


def adapt(lists: dict[str, list[ChunkHit]], weights: dict[str, float]) -> dict[str, float]:
    """This query's convex weights: ``weights`` (its script's) moved by the legs'
    confidence and agreement (:func:`query_features`). Weights that silence a leg, and
    a query one leg found nothing for, stay as they are."""
    base = weights.get("keyword", 0.0)
    if not 0 < base < 1 or not lists.get("keyword") or not lists.get("semantic"):
        return weights
    shift = 0.0
    if any(ADAPTIVE_SLOPES):  # zero slopes move nothing: no features to compute
        shift = sum(
            slope * (x - centre) / spread
            for x, centre, spread, slope in zip(
                query_features(lists),
                ADAPTIVE_CENTRE,
                ADAPTIVE_SPREAD,
                ADAPTIVE_SLOPES,
                strict=True,
            )
        )
    weight = 1 / (1 + math.exp(-(math.log(base / (1 - base)) + shift)))
    weight = round(min(1 - ADAPTIVE_BOUND, max(ADAPTIVE_BOUND, weight)), 3)
    return {"keyword": weight, "semantic": round(1 - weight, 3)}
