"""The grid that chose the hybrid fusion: normalization x depth x keyword weight, and RRF.

    python bench/fusion_grid.py --split train    # SciFact: choose here
    python bench/fusion_grid.py --split test     # report only
    python bench/fusion_grid.py --dataset cmrc2018 --embedder multilingual --split trial

Runs keyword and semantic once per query on a cached store that bench/quality.py builds
(bench/.cache/DATASET-EMBEDDER.db), then fuses offline.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import _data
import trove
from quality import CACHE, store_name
from trove.search.filters import Filters
from trove.search.query import parse

Lists = dict[str, list[tuple[str, float]]]


def collect(
    dataset: str, embedder: str, split: str, max_docs: int = 0, depth: int = 200
) -> tuple[dict[str, Lists], dict[str, str]]:
    """Each query's two legs (document id, raw score), best first, and every listed
    document's source id; kept in bench/.cache (a rerun of the grid skips the queries)."""
    store = store_name(dataset, max_docs)
    saved = CACHE / f"fusion-{store}-{embedder}-{split}.json"
    if saved.exists():
        data = json.loads(saved.read_text(encoding="utf-8"))
        return data["runs"], data["source"]
    runs: dict[str, Lists] = {}
    seen: set[str] = set()
    with trove.open(CACHE / f"{store}-{embedder}.db") as kb:
        for qid, text in _data.queries(dataset, split).items():
            where, stamp = Filters.build(), time.time()
            parsed = parse(text)
            keyword = (
                [] if parsed.empty else kb.backend.keyword_search(parsed, where, depth, stamp)
            )
            semantic = kb._hybrid.semantic(text, where, depth, stamp)
            runs[qid] = {
                "keyword": [(h.doc_id, h.score) for h in keyword],
                "semantic": [(h.doc_id, h.score) for h in semantic],
            }
            seen.update(h.doc_id for h in keyword + semantic)
        docs = kb.backend.get_documents(sorted(seen))
    source = {doc_id: str(doc.source_id) for doc_id, doc in docs.items()}
    saved.write_text(json.dumps({"runs": runs, "source": source}), encoding="utf-8")
    return runs, source


def normalize(scores: list[float], how: str) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if len(s) == 0:
        return s
    if how == "minmax":
        return (s - s.min()) / (s.max() - s.min()) if s.max() > s.min() else np.ones_like(s)
    if how == "zscore":
        return (s - s.mean()) / s.std() if s.std() > 0 else np.zeros_like(s)
    return s / s.max() if s.max() > 0 else s


def fused_run(
    runs: dict[str, Lists], source: dict[str, str], weight: float, how: str, depth: int
) -> dict[str, dict[str, float]]:
    result = {}
    for qid, lists in runs.items():
        scores: dict[str, float] = {}
        pool = {d for items in lists.values() for d, _ in items[:depth]}
        for name, w in (("keyword", weight), ("semantic", 1 - weight)):
            items = lists[name][:depth]
            values = normalize([s for _, s in items], how)
            floor = values.min() if how == "zscore" and len(values) else 0.0
            for (doc, _), value in zip(items, values, strict=True):
                scores[doc] = scores.get(doc, 0.0) + w * value
            for doc in pool - {d for d, _ in items}:
                scores[doc] = scores.get(doc, 0.0) + w * floor
        top = sorted(scores.items(), key=lambda x: -x[1])[:100]
        result[qid] = {source[d]: s for d, s in top}
    return result


def rrf_run(runs: dict[str, Lists], source: dict[str, str]) -> dict[str, dict[str, float]]:
    result = {}
    for qid, lists in runs.items():
        scores: dict[str, float] = {}
        for items in lists.values():
            for rank, (doc, _) in enumerate(items[:100], 1):
                scores[doc] = scores.get(doc, 0.0) + 1 / (60 + rank)
        result[qid] = {source[d]: s for d, s in scores.items()}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--split", default="train")
    args = parser.parse_args()
    judged = _data.qrels(args.dataset, args.split)
    runs, source = collect(args.dataset, args.embedder, args.split)
    print(f"{args.dataset} {args.split} ({args.embedder}), nDCG@10; rows: normalization")
    print("and depth, columns: keyword weight")
    print(f"rrf k=60: {_data.evaluate(rrf_run(runs, source), judged)['nDCG@10']:.4f}")
    for how in ("minmax", "zscore", "max"):
        for depth in (20, 50, 100, 200):
            cells = []
            for weight in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
                run = fused_run(runs, source, weight, how, depth)
                cells.append(f"{weight}:{_data.evaluate(run, judged)['nDCG@10']:.4f}")
            print(f"{how:<7}{depth:>4}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
