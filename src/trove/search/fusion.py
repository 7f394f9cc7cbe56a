"""Fusing two retrievers' ranked documents into one list.

Fusion is by a convex combination of z-scored scores over each retriever's top 200, or
by reciprocal rank (RRF, k=60). Chosen on each language's train split
(bench/fusion_grid.py): z-scores over min-max for Latin-script queries (SciFact train
0.7365 vs 0.7354, keyword weight 0.5) and for CJK queries (CMRC trial 0.9791 at keyword
weight 0.7 vs min-max's best, 0.9780 at 0.8; the weights are in search/hybrid.py); RRF
was lower on both (0.7149, 0.9143).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trove.models import Chunk, ChunkHit

FUSIONS = ("convex", "rrf")
RRF_K = 60


@dataclass
class Fused:
    """One document after fusion, with each retriever's rank and score kept for explain."""

    doc_id: str
    chunk_id: int
    chunk: Chunk
    score: float = 0.0
    parts: dict[str, dict[str, float]] = field(default_factory=dict)

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
        extra = {"dropped_terms": list(dropped)} if dropped else {}
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
) -> list[Fused]:
    """Merge ranked document lists (name -> hits, best first) into one.

    ``method`` is ``convex`` (weighted sum of z-scores; a document missing from a list
    gets that list's lowest), ``rrf``, or ``single`` (one list, scores kept).
    The chunk shown for a document is the one from the first list that has it (keyword
    first, so the snippet shows the words that matched).
    """
    fused: dict[str, Fused] = {}
    floors: dict[str, float] = {}
    for name, hits in lists.items():
        weight = weights.get(name, 0.0)
        normalized = zscore([h.score for h in hits])
        floors[name] = weight * min(normalized, default=0.0)
        for rank, (hit, norm) in enumerate(zip(hits, normalized, strict=True), 1):
            entry = fused.get(hit.doc_id)
            if entry is None:
                entry = fused[hit.doc_id] = Fused(hit.doc_id, hit.chunk_id, hit.chunk)
            entry.parts[name] = {"rank": rank, "score": hit.score}
            if method == "single":
                entry.score = hit.score
            elif method == "rrf":
                entry.score += weight / (RRF_K + rank)
            else:
                entry.score += weight * norm
    if method == "convex":
        for entry in fused.values():
            entry.score += sum(floor for name, floor in floors.items() if name not in entry.parts)
    ranked = sorted(fused.values(), key=lambda f: (-f.score, f.doc_id))
    return ranked[:limit]


def zscore(scores: Sequence[float]) -> list[float]:
    """Scores in standard deviations from their list's mean: comparable across retrievers
    whose scales differ (BM25 is unbounded, cosine lies in [-1, 1])."""
    if not scores:
        return []
    mean = sum(scores) / len(scores)
    spread = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    if spread == 0:
        return [0.0] * len(scores)
    return [(s - mean) / spread for s in scores]
