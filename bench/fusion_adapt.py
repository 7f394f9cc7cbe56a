"""Fit and check hybrid search's per-query fusion weights (trove.search.fusion.adapt).

    python bench/fusion_adapt.py fit       # choose the slopes on the train splits
    python bench/fusion_adapt.py report    # every split: keyword, semantic, fixed, adaptive

Works offline on each query's two legs (depth 200), collected once by bench/fusion_grid.py
from the cached stores bench/quality.py builds. ``fit`` chooses the slopes of
:func:`trove.search.fusion.adapt` on the train splits of every (data set, embedder) pair
together: the mean nDCG@10 over the pairs, less a penalty wherever hybrid falls below the
better single mode (the requirement: never more than 0.005 below it); it prints the
constants to paste into src/trove/search/fusion.py. ``report`` gives, for every split,
nDCG@10 of keyword, semantic, hybrid with the script's fixed weights and hybrid with
per-query weights (the slopes in fusion.py), computed the way ``fuse`` ranks.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

import _data
from fusion_grid import collect
from trove.embedders.base import scripts_of
from trove.embedders.default import MiniLMEmbedder
from trove.embedders.multilingual import MultilingualEmbedder
from trove.models import Chunk, ChunkHit
from trove.search import fusion
from trove.search.hybrid import CJK_KEYWORD_WEIGHT, KEYWORD_WEIGHT, SCRIPT_SHARE

# (data set, corpus size or 0 for all of it, embedder, train split, held-out split).
# SciFact with multilingual on a 1,500-document corpus: the whole of it would take the
# model hours to embed on the 2-core machine (bench/quality.py --max-docs).
SETS = [
    ("scifact", 0, "default", "train", "test"),
    ("scifact", 1500, "multilingual", "train", "test"),
    ("cmrc2018", 0, "multilingual", "trial", "dev"),
    ("cmrc2018", 0, "default", "trial", "dev"),
]
LANGUAGES = {
    "default": MiniLMEmbedder.languages,
    "multilingual": MultilingualEmbedder.languages,
}
# Train-split shortfall below the better single mode that the fit tolerates unpenalised
# (a margin under the 0.005 required on the held-out splits).
MARGIN = 0.002
DISCOUNT = 1 / np.log2(np.arange(2, 12))
# The slopes the fit tries, per feature.
GRID = np.round(np.arange(-1.0, 1.01, 0.1), 2)


@dataclass
class Query:
    """One query's legs as fuse sees them, and its judgments over their documents."""

    base: float  # the script's keyword weight; 1.0 where the model cannot read the query
    features: np.ndarray
    adaptable: bool  # both legs found something
    keyword: np.ndarray  # each document's z-score (the leg's lowest where it is missing)
    semantic: np.ndarray
    in_keyword: np.ndarray
    in_semantic: np.ndarray
    order: np.ndarray  # the documents' ranks by id: fuse breaks ties by id
    relevant: np.ndarray
    ideal: float


def load(dataset: str, max_docs: int, embedder: str, split: str) -> list[Query]:
    runs, source = collect(dataset, embedder, split, max_docs)
    judged = _data.qrels(dataset, split)
    texts = _data.queries(dataset, split)
    known = LANGUAGES[embedder]
    queries = []
    for qid, legs in runs.items():
        scripts = scripts_of(texts[qid], min_share=SCRIPT_SHARE)
        base = CJK_KEYWORD_WEIGHT if "cjk" in scripts else KEYWORD_WEIGHT
        if known is not None and not scripts <= known:
            base = 1.0
        hits = {
            name: [ChunkHit(d, 0, s, Chunk(0, 0, 0)) for d, s in items]
            for name, items in legs.items()
        }
        docs = sorted({d for items in legs.values() for d, _ in items})
        at = {d: i for i, d in enumerate(docs)}
        columns = []
        for name in ("keyword", "semantic"):
            z = fusion.zscore([h.score for h in hits[name]])
            column = np.full(len(docs), min(z, default=0.0))
            column[[at[h.doc_id] for h in hits[name]]] = z
            columns.append(column)
        both = all(hits.values())
        relevant = judged.get(qid, {})
        count = sum(1 for v in relevant.values() if v > 0)
        queries.append(
            Query(
                base=base,
                features=np.array(fusion.query_features(hits) if both else [0.0] * 3),
                adaptable=both,
                keyword=columns[0],
                semantic=columns[1],
                in_keyword=np.isin(docs, [d for d, _ in legs["keyword"]]),
                in_semantic=np.isin(docs, [d for d, _ in legs["semantic"]]),
                order=np.arange(len(docs)),
                relevant=np.array([float(relevant.get(source[d], 0) > 0) for d in docs]),
                ideal=float(DISCOUNT[: min(10, count)].sum()),
            )
        )
    return queries


def ndcg(query: Query, scores: np.ndarray, listed: np.ndarray | None = None) -> float:
    """nDCG@10 of the documents by ``scores`` (only those ``listed``, if given)."""
    relevant, order = query.relevant, query.order
    if listed is not None:
        scores, relevant, order = scores[listed], relevant[listed], order[listed]
    if not len(scores) or not query.ideal:
        return 0.0
    top = np.lexsort((order, -scores))[:10]
    return float((relevant[top] * DISCOUNT[: len(top)]).sum() / query.ideal)


def weights(
    queries: list[Query], slopes: np.ndarray, centre: np.ndarray, spread: np.ndarray
) -> np.ndarray:
    """fusion.adapt's keyword weight of each query, without building hits."""
    base = np.array([q.base for q in queries])
    features = np.array([q.features for q in queries])
    open_ = np.array([0 < q.base < 1 and q.adaptable for q in queries])
    logit = np.log(np.clip(base, 1e-9, 1 - 1e-9) / np.clip(1 - base, 1e-9, 1))
    w = 1 / (1 + np.exp(-(logit + ((features - centre) / spread) @ slopes)))
    w = np.round(np.clip(w, fusion.ADAPTIVE_BOUND, 1 - fusion.ADAPTIVE_BOUND), 3)
    return np.where(open_, w, base)


def hybrid(queries: list[Query], keyword: np.ndarray | list[float]) -> float:
    """Mean nDCG@10 of the convex fusion at each query's keyword weight (at 1.0, the
    keyword leg alone, as hybrid search runs a query the model cannot read)."""
    weights = np.asarray(keyword, dtype=float)
    fused = _ndcg_at(_padded(queries), weights)
    alone = [
        ndcg(q, q.keyword, q.in_keyword) if w == 1 else 0.0
        for q, w in zip(queries, weights, strict=True)
    ]
    return float(np.mean(np.where(weights == 1, alone, fused)))


def _padded(queries: list[Query]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The queries' columns as matrices, one row each (padding ranks below everything)."""
    key = id(queries)
    if key not in _PADDED:
        width = max(len(q.keyword) for q in queries)
        k, s = np.full((2, len(queries), width), -1e9)
        relevant = np.zeros((len(queries), width))
        for i, q in enumerate(queries):
            k[i, : len(q.keyword)], s[i, : len(q.semantic)] = q.keyword, q.semantic
            relevant[i, : len(q.relevant)] = q.relevant
        ideal = np.array([q.ideal for q in queries])
        _PADDED[key] = (k, s, relevant, ideal)
    return _PADDED[key]


_PADDED: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def _ndcg_at(
    padded: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray
) -> np.ndarray:
    k, s, relevant, ideal = padded
    scores = weights[:, None] * k + (1 - weights[:, None]) * s
    top = np.argsort(-scores, axis=1, kind="stable")[:, :10]  # ties: by document id
    gains = np.take_along_axis(relevant, top, axis=1) @ DISCOUNT
    return np.divide(gains, ideal, out=np.zeros_like(gains), where=ideal > 0)


def singles(queries: list[Query]) -> tuple[float, float]:
    """Mean nDCG@10 of keyword and of semantic alone (each over its own list)."""
    keyword = np.mean([ndcg(q, q.keyword, q.in_keyword) for q in queries])
    semantic = np.mean([ndcg(q, q.semantic, q.in_semantic) for q in queries])
    return float(keyword), float(semantic)


def fit(sets: list[list[Query]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slopes (and the features' centre and spread) that maximise the train objective."""
    pooled = np.array([q.features for qs in sets for q in qs if 0 < q.base < 1 and q.adaptable])
    centre, spread = pooled.mean(axis=0), pooled.std(axis=0)
    floors = [max(singles(qs)) - MARGIN for qs in sets]

    def loss(slopes: np.ndarray) -> float:
        total = 0.0
        for qs, floor in zip(sets, floors, strict=True):
            got = hybrid(qs, weights(qs, slopes, centre, spread))
            total += got - 10 * max(0.0, floor - got)
        return -total / len(sets)

    # nDCG is a step function of the slopes: a coordinate search over a grid, not a
    # gradient method (Nelder-Mead stalls on its first plateau)
    slopes = np.zeros(len(centre))
    best = -loss(slopes)
    for sweep in range(3):
        for i in range(len(slopes)):
            for value in GRID:
                trial = slopes.copy()
                trial[i] = value
                got = -loss(trial)
                if got > best + 1e-6:
                    best, slopes = got, trial
        print(f"  sweep {sweep + 1}: slopes {np.round(slopes, 2).tolist()} objective {best:.4f}")
    return np.round(slopes, 3), np.round(centre, 4), np.round(spread, 4)


def current() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.array(fusion.ADAPTIVE_SLOPES),
        np.array(fusion.ADAPTIVE_CENTRE),
        np.array(fusion.ADAPTIVE_SPREAD),
    )


def report(split_index: int, slopes: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    print("| data set | split | embedder | keyword | semantic | fixed | per query | vs better |")
    print("|---|---|---|---|---|---|---|---|")
    for dataset, max_docs, embedder, *splits in SETS:
        split = splits[split_index]
        qs = load(dataset, max_docs, embedder, split)
        keyword, semantic = singles(qs)
        fixed = hybrid(qs, [q.base for q in qs])
        adapted = hybrid(qs, weights(qs, *slopes))
        name = f"{dataset} ({max_docs} docs)" if max_docs else dataset
        print(
            f"| {name} | {split} | {embedder} | {keyword:.4f} | {semantic:.4f} | {fixed:.4f} "
            f"| {adapted:.4f} | {adapted - max(keyword, semantic):+.4f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("fit", "report"))
    args = parser.parse_args()
    if args.action == "fit":
        sets = [load(d, n, e, train) for d, n, e, train, _ in SETS]
        slopes, centre, spread = fit(sets)
        print(f"ADAPTIVE_CENTRE = {tuple(centre.tolist())}")
        print(f"ADAPTIVE_SPREAD = {tuple(spread.tolist())}")
        print(f"ADAPTIVE_SLOPES = {tuple(slopes.tolist())}")
        report(0, (slopes, centre, spread))
        return
    for index in (0, 1):
        report(index, current())


if __name__ == "__main__":
    main()
