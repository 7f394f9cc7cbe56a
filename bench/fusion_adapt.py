"""Fit and check hybrid search's per-query fusion weights (trove.search.fusion.adapt).

    python bench/fusion_adapt.py fit       # choose the priors and slopes on the train splits
    python bench/fusion_adapt.py report    # every split: keyword, semantic, fixed, adaptive

Works offline on each query's two legs (depth 200), collected once by bench/fusion_grid.py
from the cached stores bench/quality.py builds. ``fit`` chooses, on the train splits only:

1. each embedder's prior keyword weight per script (fusion.PRIORS): the best mean
   nDCG@10 among the weights that stay within MARGIN of the better single mode in the
   worst tenth of bootstrap resamples of the train queries (a weight that wins on
   average but loses on a plausible draw of queries is not chosen);
2. then the slopes of the per-query features (max-min): the smallest gain over the priors
   alone, across every (data set, embedder) pair, must be positive, so slopes that help one
   pair at another's cost are never chosen.

It prints the constants to paste into src/trove/search/fusion.py. ``report`` gives, for
every split, nDCG@10 of keyword, semantic, hybrid with the script's fixed weights and with
the shipped per-query weights (priors and slopes in fusion.py), computed the way ``fuse``
ranks.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

import _data
from fusion_grid import collect
from trove.embedders.base import Embedder, scripts_of
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
MODELS = {"default": MiniLMEmbedder, "multilingual": MultilingualEmbedder}
# Train-split shortfall below the better single mode that the fit tolerates unpenalised
# (a margin under the 0.005 required on the held-out splits).
MARGIN = 0.002
DISCOUNT = 1 / np.log2(np.arange(2, 12))
# The slopes the fit tries, per feature; the priors it tries; the bootstrap behind them.
GRID = np.round(np.arange(-1.0, 1.01, 0.1), 2)
PRIOR_GRID = np.round(np.arange(0.3, 0.91, 0.1), 2)
RESAMPLES, QUANTILE = 1000, 10
# A prior is fitted only for a (model, script) with this many train queries.
MIN_QUERIES = 100


@dataclass
class Query:
    """One query's legs as fuse sees them, and its judgments over their documents."""

    base: float  # its prior (fusion.prior); 1.0 where the model cannot read the query
    default: float  # the script's fixed keyword weight (or 1.0)
    group: tuple[str, str]  # (model id, script group): what its prior is fitted for
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
    return from_runs(runs, source, judged, texts, MODELS[embedder])


def from_runs(
    runs: dict[str, dict[str, list[tuple[str, float]]]],
    source: dict[str, str],
    judged: dict[str, dict[str, int]],
    texts: dict[str, str],
    model: type[Embedder],
) -> list[Query]:
    """Each query's legs (``runs``: query id -> leg -> (document id, raw score)) as
    Query, judged against ``judged`` through each document's source id."""
    queries = []
    for qid, legs in runs.items():
        scripts = scripts_of(texts[qid], min_share=SCRIPT_SHARE)
        default = CJK_KEYWORD_WEIGHT if "cjk" in scripts else KEYWORD_WEIGHT
        if model.languages is not None and not scripts <= model.languages:
            default = 1.0
        base = fusion.prior(model.model_id, scripts, default) if default < 1 else default
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
                default=default,
                group=(model.model_id, fusion.script_group(scripts)),
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
    """Mean nDCG@10 of the convex fusion at each query's keyword weight."""
    return float(np.mean(per_query(queries, keyword)))


def per_query(queries: list[Query], keyword: np.ndarray | list[float]) -> np.ndarray:
    """Each query's nDCG@10 of the convex fusion at its keyword weight (at 1.0, the
    keyword leg alone, as hybrid search runs a query the model cannot read)."""
    weights = np.asarray(keyword, dtype=float)
    fused = _ndcg_at(_padded(queries), weights)
    alone = [
        ndcg(q, q.keyword, q.in_keyword) if w == 1 else 0.0
        for q, w in zip(queries, weights, strict=True)
    ]
    return np.where(weights == 1, alone, fused)


def _padded(queries: list[Query]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The queries' columns as matrices, one row each (padding ranks below everything)."""
    key = id(queries)
    if key not in _PADDED or _PADDED[key][0] is not queries:  # an id reused
        width = max(len(q.keyword) for q in queries)
        k, s = np.full((2, len(queries), width), -1e9)
        relevant = np.zeros((len(queries), width))
        for i, q in enumerate(queries):
            k[i, : len(q.keyword)], s[i, : len(q.semantic)] = q.keyword, q.semantic
            relevant[i, : len(q.relevant)] = q.relevant
        ideal = np.array([q.ideal for q in queries])
        _PADDED[key] = (queries, (k, s, relevant, ideal))
    return _PADDED[key][1]


_PADDED: dict[int, tuple[list[Query], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {}


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
    keyword, semantic = single_runs(queries)
    return float(keyword.mean()), float(semantic.mean())


def single_runs(queries: list[Query]) -> tuple[np.ndarray, np.ndarray]:
    """Each query's nDCG@10 with keyword alone and with semantic alone."""
    keyword = np.array([ndcg(q, q.keyword, q.in_keyword) for q in queries])
    semantic = np.array([ndcg(q, q.semantic, q.in_semantic) for q in queries])
    return keyword, semantic


def fit_priors(sets: list[list[Query]]) -> dict[tuple[str, str], float]:
    """Each (model, script group)'s prior keyword weight: the best mean nDCG@10 on its
    train queries among the weights whose margin over the better single mode, at the
    QUANTILE-th percentile of bootstrap resamples of those queries, is at least -MARGIN
    (the largest such margin if none is); sets each query's ``base`` to it."""
    groups: dict[tuple[str, str], list[Query]] = {}
    for q in (q for qs in sets for q in qs if 0 < q.default < 1):
        groups.setdefault(q.group, []).append(q)
    rng = np.random.default_rng(0)
    priors = {}
    for group, qs in sorted(groups.items()):
        if len(qs) < MIN_QUERIES:
            continue
        keyword, semantic = single_runs(qs)
        curves = np.stack([per_query(qs, np.full(len(qs), w)) for w in PRIOR_GRID], axis=1)
        draws = rng.integers(0, len(qs), (RESAMPLES, len(qs)))
        better = np.maximum(keyword[draws].mean(axis=1), semantic[draws].mean(axis=1))
        low = np.percentile(curves[draws].mean(axis=1) - better[:, None], QUANTILE, axis=0)
        mean = curves.mean(axis=0)
        safe = low >= -MARGIN  # never hurts, on a plausible draw of queries
        pick = int(np.argmax(np.where(safe, mean, -np.inf))) if safe.any() else int(np.argmax(low))
        priors[group] = float(PRIOR_GRID[pick])
        cells = "  ".join(
            f"{w}:{m:.4f}/{d:+.4f}" for w, m, d in zip(PRIOR_GRID, mean, low, strict=True)
        )
        print(f"  {group} ({len(qs)} queries), prior: mean / p{QUANTILE} margin: {cells}")
        for q in qs:
            q.base = priors[group]
    return priors


def fit(sets: list[list[Query]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slopes (and the features' centre and spread) that maximise the smallest gain over
    the priors alone across the train sets (then the mean gain)."""
    sets = [qs for qs in sets if any(0 < q.base < 1 and q.adaptable for q in qs)]
    pooled = np.array([q.features for qs in sets for q in qs if 0 < q.base < 1 and q.adaptable])
    centre, spread = pooled.mean(axis=0), pooled.std(axis=0)
    flat = [hybrid(qs, weights(qs, np.zeros(len(centre)), centre, spread)) for qs in sets]

    def objective(slopes: np.ndarray) -> float:
        gains = [
            hybrid(qs, weights(qs, slopes, centre, spread)) - before
            for qs, before in zip(sets, flat, strict=True)
        ]
        return min(gains) + 0.01 * float(np.mean(gains))

    # nDCG is a step function of the slopes: a coordinate search over a grid, not a
    # gradient method (Nelder-Mead stalls on its first plateau)
    slopes = np.zeros(len(centre))
    best = objective(slopes)
    for sweep in range(3):
        for i in range(len(slopes)):
            for value in GRID:
                trial = slopes.copy()
                trial[i] = value
                got = objective(trial)
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
        fixed = hybrid(qs, [q.default for q in qs])
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
        priors = fit_priors(sets)
        slopes, centre, spread = fit(sets)
        print(f"PRIORS = {priors}")
        print(f"ADAPTIVE_CENTRE = {tuple(centre.tolist())}")
        print(f"ADAPTIVE_SPREAD = {tuple(spread.tolist())}")
        print(f"ADAPTIVE_SLOPES = {tuple(slopes.tolist())}")
        return
    for index in (0, 1):
        report(index, current())


if __name__ == "__main__":
    main()
