"""Hybrid fusion on data nobody tuned for: leave-one-dataset-out over public sets.

    python bench/debian_sets.py RAW /work/cache/debian_sets   # six languages, BEIR layout
    python bench/fusion_lodo.py build                 # stores and each query's two legs
    python bench/fusion_lodo.py report                # the table

For every (data set, embedder), each query's keyword and semantic legs (depth 200) come
from a trove store of the set (built through bench/_vcache.py, so each text is embedded
once). ``report`` gives nDCG@10 of keyword, semantic, hybrid with the shipped rule
(fusion.PRIORS and slopes, as ``fuse`` ranks) and hybrid with the rule refitted by
bench/fusion_adapt.py's procedure on every *other* set (leave-one-dataset-out: priors per
(embedder, script), then slopes), evaluated on the held-out set. Stores and legs are kept
in CACHE (outside git), vectors in bench/_vcache.ROOT.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import fusion_adapt as fa
import trove
from _vcache import CachedEmbedder
from trove.embedders import get_embedder
from trove.search.filters import Filters
from trove.search.query import parse

CACHE = Path(os.environ.get("TROVE_BENCH_LODO", "/work/cache/lodo"))
DEBIAN = Path(os.environ.get("TROVE_BENCH_DEBIAN", "/work/cache/debian_sets"))
SHARED = Path(os.environ.get("TROVE_BENCH_DATA", "/work/shared/data"))
EMBEDDERS = ("default", "multilingual")
Legs = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class DataSet:
    name: str
    folder: Path
    split: str
    max_docs: int = 0  # 0: all; else every judged document first, then others
    max_queries: int = 0  # 0: all; else the first N judged queries in file order


SETS = [
    *(
        DataSet(f"debian-{lang}", DEBIAN / f"debian-{lang}", "test")
        for lang in ("en", "de", "fr", "ja", "ko", "zh_CN")
    ),
    DataSet("scifact-1500", SHARED / "scifact", "test", max_docs=1500),
    DataSet("cmrc2018", SHARED / "cmrc2018", "dev", max_queries=400),
]


def qrels(data: DataSet) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    with (data.folder / "qrels" / f"{data.split}.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            judged.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return judged


def queries(data: DataSet) -> dict[str, str]:
    judged = qrels(data)
    found: dict[str, str] = {}
    with (data.folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["_id"] in judged:
                found[row["_id"]] = row["text"]
    if data.max_queries:
        found = dict(list(found.items())[: data.max_queries])
    return found


def documents(data: DataSet) -> list[dict[str, str]]:
    with (data.folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    docs = [
        {
            "text": r["text"],
            "title": r.get("title", ""),
            "source": data.name,
            "source_id": r["_id"],
        }
        for r in rows
    ]
    if not data.max_docs:
        return docs
    judged = {d for rel in qrels(data).values() for d in rel}
    kept = [d for d in docs if d["source_id"] in judged]
    others = [d for d in docs if d["source_id"] not in judged]
    return kept + others[: max(0, data.max_docs - len(kept))]


def legs(data: DataSet, embedder: str, depth: int = 200) -> tuple[dict[str, Legs], dict[str, str]]:
    """Each query's two legs (document id, raw score), best first, and each listed
    document's source id; built once (store and legs kept in CACHE)."""
    saved = CACHE / f"legs-{data.name}-{embedder}.json"
    if saved.exists():
        got = json.loads(saved.read_text(encoding="utf-8"))
        return got["runs"], got["source"]
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{data.name}-{embedder}.db"
    model = CachedEmbedder(get_embedder(embedder))
    started = time.perf_counter()
    if not path.exists():
        part = path.with_suffix(".part.db")
        for stale in CACHE.glob(part.name + "*"):  # a build that was stopped
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink()
        with trove.open(part, embedder=model) as kb:
            kb.add_many(documents(data))
        part.replace(path)
    runs: dict[str, Legs] = {}
    seen: set[str] = set()
    with trove.open(path, embedder=model) as kb:
        for qid, text in queries(data).items():
            where, stamp, parsed = Filters.build(), time.time(), parse(text)
            keyword = (
                [] if parsed.empty else kb.backend.keyword_search(parsed, where, depth, stamp)
            )
            semantic = kb._hybrid.semantic(text, where, depth, stamp)
            runs[qid] = {
                "keyword": [(h.doc_id, h.score) for h in keyword],
                "semantic": [(h.doc_id, h.score) for h in semantic],
            }
            seen.update(h.doc_id for h in keyword + semantic)
        source = {k: str(d.source_id) for k, d in kb.backend.get_documents(sorted(seen)).items()}
    saved.write_text(json.dumps({"runs": runs, "source": source}), encoding="utf-8")
    print(
        f"{data.name} {embedder}: {len(runs)} queries in {time.perf_counter() - started:.0f} s"
        f" (vectors cached {model.hits}, embedded {model.misses})",
        flush=True,
    )
    return runs, source


Pairs = dict[tuple[str, str], list[fa.Query]]


def load(sets: list[DataSet], embedders: list[str], built: bool) -> tuple[Pairs, dict]:
    """Each (set, embedder)'s queries (with ``built``, only the pairs whose legs are in
    CACHE already), and each query's shipped prior (by identity)."""
    pairs: Pairs = {}
    for data in sets:
        judged, texts = qrels(data), queries(data)
        for embedder in embedders:
            if built and not (CACHE / f"legs-{data.name}-{embedder}.json").exists():
                continue
            runs, source = legs(data, embedder)
            pairs[data.name, embedder] = fa.from_runs(
                runs, source, judged, texts, fa.MODELS[embedder]
            )
    shipped = {id(q): q.base for qs in pairs.values() for q in qs}
    return pairs, shipped


def refit(train: list[list[fa.Query]]) -> tuple[dict, tuple]:
    """bench/fusion_adapt.py's fit on ``train`` alone: priors per (embedder, script) from
    the script's default weight, then slopes. Its progress goes to CACHE/fits.log."""
    for q in (q for qs in train for q in qs):
        q.base = q.default
    with (CACHE / "fits.log").open("a", encoding="utf-8") as log, redirect_stdout(log):
        priors = fa.fit_priors(train)
        slopes = fa.fit(train)
    return priors, slopes


def held_out(qs: list[fa.Query], priors: dict, slopes: tuple) -> float:
    """nDCG@10 of ``qs`` with a refitted rule: its prior (the script's weight where none
    was fitted), then its slopes."""
    for q in qs:
        q.base = priors.get(q.group, q.default) if 0 < q.default < 1 else q.default
    return fa.hybrid(qs, fa.weights(qs, *slopes))


def report(sets: list[DataSet], embedders: list[str], built: bool = False) -> None:
    pairs, shipped = load(sets, embedders, built)
    names = [s.name for s in sets]
    rows, folds = [], []
    for held in names:
        train = [qs for (name, _), qs in pairs.items() if name != held]
        priors, slopes = refit(train)
        folds.append(f"held out {held}: priors {priors}, slopes {slopes[0].tolist()}")
        for embedder in (e for e in embedders if (held, e) in pairs):
            qs = pairs[held, embedder]
            refitted = held_out(qs, priors, slopes)
            for q in qs:
                q.base = shipped[id(q)]
            keyword, semantic = fa.singles(qs)
            rule = fa.hybrid(qs, fa.weights(qs, *fa.current()))
            rows.append((held, embedder, len(qs), keyword, semantic, rule, refitted))
    print(
        "| held-out set | embedder | queries | keyword | semantic | hybrid (shipped) "
        "| vs better | hybrid (LODO refit) | vs better |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for held, embedder, n, keyword, semantic, rule, refitted in rows:
        better = max(keyword, semantic)
        print(
            f"| {held} | {embedder} | {n} | {keyword:.4f} | {semantic:.4f} | {rule:.4f} "
            f"| {rule - better:+.4f} | {refitted:.4f} | {refitted - better:+.4f} |"
        )
    for label, column in (("shipped", 5), ("LODO refit", 6)):
        gains = np.array([r[column] - r[3] for r in rows])
        worst = min(r[column] - max(r[3], r[4]) for r in rows)
        print(
            f"{label}: mean gain over keyword {gains.mean():+.4f} (min {gains.min():+.4f}), "
            f"worst vs better single mode {worst:+.4f}"
        )
    print("\n".join(folds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("build", "report"))
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--sets", default=",".join(s.name for s in SETS))
    parser.add_argument("--built", action="store_true", help="report: only pairs built")
    args = parser.parse_args()
    chosen = [s for s in SETS if s.name in args.sets.split(",")]
    if args.action == "build":
        for embedder in args.embedders.split(","):
            for data in chosen:
                legs(data, embedder)
        return
    report(chosen, args.embedders.split(","), args.built)


if __name__ == "__main__":
    main()
