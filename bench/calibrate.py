"""Fit and check the score calibration (src/trove/search/calibration.json).

    python bench/calibrate.py fit       # train splits: SciFact train, CMRC 2018 trial
    python bench/calibrate.py report    # test splits: ECE, top-hit figures, nDCG, plot

Runs every mode on cached stores that bench/quality.py builds (bench/.cache/NAME-EMBEDDER.db)
through the public API (``search(explain=True)`` carries each hit's calibration features),
fits one logistic model per mode and embedding model over the top 10 hits of every query,
and writes it beside the calibration module. ``report`` gives the expected calibration
error (10 equal-width bins over the top 10 hits of every query) per mode, how often the top
hit scores >= 0.5 and how often such a top hit is relevant, nDCG@10, and a reliability plot.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

import _data
import trove
from quality import CACHE
from trove.embedders.base import scripts_of
from trove.search import calibration
from trove.search.filters import Filters
from trove.search.fusion import fuse
from trove.search.hybrid import SCRIPT_SHARE
from trove.search.query import parse

# (data set, embedder, split to fit on, split to report on)
SETS = [
    ("scifact", "default", "train", "test"),
    ("cmrc2018", "multilingual", "trial", "dev"),
]
MODES = ("keyword", "semantic", "hybrid")
DEPTH = 10
PLOT = Path(__file__).resolve().parents[1] / "docs" / "calibration.png"
PAGE = PLOT.with_name("benchmarks.md")

Row = tuple[str, list[float], int, float, str, str]  # key, features, label, score, qid, sid


def collect(
    name: str, embedder: str, split: str, fresh: bool = False, limit: int = 0
) -> dict[str, list[Row]]:
    """Per mode: (model key, features, relevant?, score, query id, source id) of top hits.

    Kept in bench/.cache (the features do not depend on the fitted model, so a refit
    does not rerun the queries; --fresh does)."""
    full = CACHE / f"calibration-{name}-{embedder}-{split}.json"
    saved = CACHE / f"calibration-{name}-{embedder}-{split}{f'-{limit}' if limit else ''}.json"
    if limit and full.exists() and not fresh:  # every query was collected: take the first N
        rows = collect(name, embedder, split)
        first = list(dict.fromkeys(r[4] for r in rows["keyword"] + rows["hybrid"]))[:limit]
        return {mode: [r for r in items if r[4] in set(first)] for mode, items in rows.items()}
    if saved.exists() and not fresh:
        loaded = {
            mode: [tuple(r) for r in rows] for mode, rows in json.loads(saved.read_text()).items()
        }
        return upgrade(name, split, loaded)  # type: ignore[arg-type]
    rows = _run(name, embedder, split, limit)
    if rows:
        saved.write_text(json.dumps(rows))
    return rows


def _run(name: str, embedder: str, split: str, limit: int = 0) -> dict[str, list[Row]]:
    """Each leg runs once per query (depth 200, as hybrid search does); the keyword and
    semantic modes' lists are their top 10, the hybrid list their fusion, each scored by
    the functions Store.search uses (half the work of three searches per query)."""
    path = CACHE / f"{name}-{embedder}.db"
    if not path.exists():
        print(f"  skipped {path.name}: build it with bench/quality.py first")
        return {}
    judged = _data.qrels(name, split)
    rows: dict[str, list[Row]] = {mode: [] for mode in MODES}
    with trove.open(path) as kb:
        for qid, text in list(_data.queries(name, split).items())[: limit or None]:
            _query_rows(kb, qid, text, judged, rows)
    return rows


def _query_rows(
    kb: trove.Store,
    qid: str,
    text: str,
    judged: dict[str, dict[str, int]],
    rows: dict[str, list[Row]],
) -> None:
    """One query's rows in every mode, appended to ``rows``."""
    model_id = kb.vectors.resolve().model_id
    legs, weights, info = _legs(kb, text)
    for mode in MODES:
        if mode == "hybrid":
            lists = {k: v for k, v in legs.items() if weights.get(k, 0) > 0}
            method = kb.fusion if len(lists) > 1 else "single"
            adaptive = kb.keyword_weight is None  # as HybridSearch.search fuses
            fused = fuse(lists, weights, method=method, limit=DEPTH, adaptive=adaptive)
        else:
            lists = {mode: legs[mode][:DEPTH]}
            fused = fuse(lists, {mode: 1.0}, method="single", limit=DEPTH)
        docs = kb.backend.get_documents([f.doc_id for f in fused])
        texts = calibration.document_texts(kb.backend.get_document, docs)
        uses_model = "semantic" in lists
        key, feats, scores = calibration.calibrate(
            fused, lists, info, model_id if uses_model else None, texts
        )
        for f, row, score in zip(fused, feats, scores, strict=True):
            sid = str(docs[f.doc_id].source_id)
            label = int(judged.get(qid, {}).get(sid, 0) > 0)
            rows[mode].append((key, row, label, score, qid, sid))


def small(name: str, embedder: str, split: str, stores: int = 60) -> dict[str, list[Row]]:
    """Rows from small stores drawn from the split (seeded): each holds the judged
    documents of 2 queries and 1 to 6 other documents, and answers those 2 queries and 2
    whose documents it lacks, so that a store of a few notes, where BM25's idf is near
    zero, is in the training distribution. Cached like :func:`collect`."""
    saved = CACHE / f"calibration-{name}-{embedder}-{split}-small{stores}.json"
    if saved.exists():
        return {m: [tuple(r) for r in rs] for m, rs in json.loads(saved.read_text()).items()}  # type: ignore[misc]
    rng = random.Random(15)
    judged = _data.qrels(name, split)
    queries = [(q, t) for q, t in _data.queries(name, split).items() if judged.get(q)]
    docs = {d["source_id"]: d for d in _data.documents(name)}
    ids = sorted(docs)
    rows: dict[str, list[Row]] = {mode: [] for mode in MODES}
    model = trove.open(":memory:", embedder=embedder).embedder
    for _ in range(stores):
        asked = rng.sample(queries, 4)
        held = {sid for q, _ in asked[:2] for sid in judged[q] if sid in docs}
        lacking = {sid for q, _ in asked[2:] for sid in judged[q]}
        held |= {s for s in rng.sample(ids, rng.randint(1, 6)) if s not in lacking}
        with trove.open(":memory:", embedder=model) as kb:
            kb.add_many([docs[sid] for sid in sorted(held)])
            for qid, text in asked:
                _query_rows(kb, qid, text, judged, rows)
    saved.write_text(json.dumps(rows))
    return rows


def upgrade(name: str, split: str, rows: dict[str, list[Row]]) -> dict[str, list[Row]]:
    """Rows cached before the coverage feature (features version 1) gain it, computed
    from the query and the document as Store.search computes it (no queries rerun)."""
    texts = {d["source_id"]: f"{d['title']}\n{d['text']}" for d in _data.documents(name)}
    asked = _data.queries(name, split)
    infos: dict[str, calibration.QueryInfo] = {}
    out: dict[str, list[Row]] = {}
    for mode, items in rows.items():
        out[mode] = []
        for key, feats, label, score, qid, sid in items:
            if len(feats) not in (8, 12):
                out[mode].append((key, feats, label, score, qid, sid))
                continue
            if qid not in infos:
                parsed = parse(asked[qid])
                infos[qid] = calibration.query_info(parsed.words, parsed.cjk, False)
            cover = calibration.coverage(infos[qid], texts.get(sid, ""))
            out[mode].append((key, [*feats[:-1], cover, feats[-1]], label, score, qid, sid))
    return out


def _legs(kb: trove.Store, text: str) -> tuple[dict[str, list[Any]], dict[str, float], Any]:
    parsed, where, stamp = parse(text), Filters.build(), time.time()
    scripts = scripts_of(text, min_share=SCRIPT_SHARE)
    weights = kb._hybrid.weights(scripts, "hybrid")
    keyword = [] if parsed.empty else kb.backend.keyword_search(parsed, where, 200, stamp)
    semantic = kb._hybrid.semantic(text, where, 200, stamp)
    info = calibration.query_info(parsed.words, parsed.cjk, "cjk" in scripts)
    return {"keyword": keyword, "semantic": semantic}, weights, info


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, object]:
    """L2-regularised logistic regression on standardised features (Newton's method)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -60, 60)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {
        "bias": float(w[0]),
        "weights": [float(v) for v in w[1:]],
        "mean": [float(v) for v in mean],
        "scale": [float(v) for v in scale],
        "n": len(y),
        "positives": int(y.sum()),
    }


def fit(train_queries: int = 0) -> None:
    by_key: dict[str, list[tuple[list[float], int]]] = {}
    keyword_from: set[str] = set()
    for name, embedder, train, _ in SETS:
        print(f"collecting {name} {train} ({embedder})")
        sets = [collect(name, embedder, train, limit=train_queries), small(name, embedder, train)]
        for rows in (items for found in sets for items in found.values()):
            for key, feats, label, *_ in rows:
                if key == "keyword" and name in keyword_from:
                    continue  # the keyword leg does not depend on the embedder: count once
                by_key.setdefault(key, []).append((feats, label))
        keyword_from.add(name)
    models: dict[str, object] = {}
    for key, rows in sorted(by_key.items()):
        x = np.array([f for f, _ in rows], dtype=float)
        y = np.array([label for _, label in rows], dtype=float)
        models[key] = logistic(x, y)
        print(f"  {key}: {len(y)} hits, {int(y.sum())} relevant")
    default_id = "all-MiniLM-L6-v2-int8"
    models["fallback"] = {m: f"{m}@{default_id}" for m in ("semantic", "hybrid")}
    payload = {
        "features_version": calibration.FEATURES_VERSION,
        "fitted": time.strftime("%Y-%m-%d"),
        "fitted_on": [f"{n} {s} ({e}), and small stores drawn from it" for n, e, s, _ in SETS],
        "train_queries": train_queries or "all",
        "top_hits": DEPTH,
        "models": models,
    }
    calibration.MODEL_FILE.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    calibration.reload()
    print(f"wrote {calibration.MODEL_FILE}")


def rescore(rows: list[Row]) -> list[Row]:
    """The rows' scores under the calibration now on disk (features are model-free)."""
    out: list[Row] = []
    start = 0
    for end in range(1, len(rows) + 1):
        if end == len(rows) or rows[end][4] != rows[start][4]:
            group = rows[start:end]
            probs = calibration.monotone([calibration.probability(r[0], r[1]) for r in group])
            out += [(r[0], r[1], r[2], p, r[4], r[5]) for r, p in zip(group, probs, strict=True)]
            start = end
    return out


def ece(scores: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    edges = np.minimum((scores * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.sum() * abs(scores[inside].mean() - labels[inside].mean())
    return total / len(scores)


def report() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    print(f"machine: {_data.machine()}")
    table: list[str] = []
    fig, axes = plt.subplots(1, len(SETS), figsize=(5 * len(SETS), 4.5))
    for axis, (name, embedder, _, split) in zip(axes, SETS, strict=True):
        judged = _data.qrels(name, split)
        for mode, rows in collect(name, embedder, split).items():
            rows = rescore(rows)
            scores = np.array([r[3] for r in rows])
            labels = np.array([r[2] for r in rows], dtype=float)
            top = [r for i, r in enumerate(rows) if i == 0 or rows[i - 1][4] != r[4]]
            confident = [r for r in top if r[3] >= 0.5]
            run: dict[str, dict[str, float]] = {}
            for _, _, _, score, qid, sid in rows:
                run.setdefault(qid, {})[sid] = score + 1e-9 * (DEPTH - len(run.get(qid, {})))
            ndcg = _data.evaluate(run, judged)["nDCG@10"]
            share = len(confident) / max(1, len(judged))
            precision = sum(r[2] for r in confident) / max(1, len(confident))
            error = ece(scores, labels)
            print(
                f"{name} {split} ({embedder}) {mode:<8} ECE {error:.3f}  "
                f"top>=0.5 {share:.1%} of queries, relevant {precision:.1%}  "
                f"nDCG@10 {ndcg:.4f}"
            )
            table.append(
                f"| {name} {split} ({embedder}) | {mode} | {error:.3f} | {share:.1%} | "
                f"{precision:.1%} | {ndcg:.4f} |"
            )
            _reliability(axis, scores, labels, mode)
        axis.set_title(f"{name} {split} ({embedder})")
    fig.tight_layout()
    fig.savefig(PLOT, dpi=80)
    _write_section(table)
    print(f"wrote {PLOT} and its section of {PAGE}")


def _write_section(table: list[str]) -> None:
    """This script's section of docs/benchmarks.md, after the mark _report.py keeps."""
    from _report import KEEP_MARK

    load = os.getloadavg()[0]
    section = [
        KEEP_MARK,
        "",
        "## Calibrated scores",
        "",
        f"Generated by `bench/calibrate.py report` on {time.strftime('%Y-%m-%d')}; machine: "
        f"{_data.machine()}, load {load:.1f}. A hit's score estimates the probability that it "
        "is relevant; the model was fitted on the train splits (SciFact train, CMRC 2018 "
        "trial) and is checked here on the test splits. ECE: expected calibration error, "
        "10 equal-width bins over the top 10 hits of every query (required: at most 0.10 "
        "per mode). Top >= 0.5: the share of queries whose top hit scores at least 0.5, and "
        "how often that top hit is relevant. nDCG@10 of the calibrated list (calibration "
        "never reorders a query's hits).",
        "",
        "| data set | mode | ECE | top >= 0.5 | of those relevant | nDCG@10 |",
        "|---|---|---|---|---|---|",
        *table,
        "",
        "![reliability: share relevant per score bin](calibration.png)",
        "",
        *_nonsense_section(),
    ]
    text = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    PAGE.write_text(text.partition(KEEP_MARK)[0].rstrip("\n") + "\n\n" + "\n".join(section))


def _nonsense_section() -> list[str]:
    """bench/nonsense.py's last figures (kept in bench/.cache), if it ran."""
    saved = CACHE / "nonsense.json"
    if not saved.exists():
        return []
    found = json.loads(saved.read_text())
    return [
        "### Nonsense queries under the CLI's floor",
        "",
        f"Generated by `bench/nonsense.py` ({found['note']}): 200 seeded nonsense queries "
        "(English and Chinese words from the corpora's vocabularies, random strings) in "
        "the default hybrid mode; a query shows a hit when any of its top 10 scores at least "
        "the floor (required: a hit shown for at most 5% on each store).",
        "",
        "| store | queries | a hit shown |",
        "|---|---|---|",
        *found["table"],
        "",
    ]


def _reliability(axis: object, scores: np.ndarray, labels: np.ndarray, mode: str) -> None:
    edges = np.minimum((scores * 10).astype(int), 9)
    xs = [scores[edges == b].mean() for b in range(10) if (edges == b).any()]
    ys = [labels[edges == b].mean() for b in range(10) if (edges == b).any()]
    axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8)  # type: ignore[attr-defined]
    axis.plot(xs, ys, marker="o", label=mode)  # type: ignore[attr-defined]
    axis.set_xlabel("score")  # type: ignore[attr-defined]
    axis.set_ylabel("share relevant")  # type: ignore[attr-defined]
    axis.legend()  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["fit", "report"])
    parser.add_argument(
        "--train-queries", type=int, default=0, help="fit on the first N queries of each set"
    )
    args = parser.parse_args()
    fit(args.train_queries) if args.what == "fit" else report()


if __name__ == "__main__":
    main()
