"""Loading BEIR-layout data sets for the benchmarks (corpus, queries, qrels)."""

from __future__ import annotations

import csv
import json
import os
import platform
import statistics
from collections.abc import Iterator
from pathlib import Path

# Beside the checkout (/work/main -> /work/shared/data); $TROVE_BENCH_DATA elsewhere
# (a git worktree one level deeper).
DATA = Path(
    os.environ.get("TROVE_BENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


def corpus(name: str) -> Iterator[dict[str, str]]:
    with (DATA / name / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def documents(name: str) -> list[dict[str, str]]:
    """The corpus as trove documents: BEIR ids become source ids of source ``name``."""
    return [
        {"text": d["text"], "title": d.get("title", ""), "source": name, "source_id": d["_id"]}
        for d in corpus(name)
    ]


def queries(name: str, split: str) -> dict[str, str]:
    judged = qrels(name, split)
    found = {}
    with (DATA / name / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["_id"] in judged:
                found[row["_id"]] = row["text"]
    return found


def qrels(name: str, split: str) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    with (DATA / name / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            judged.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return judged


def evaluate(
    run: dict[str, dict[str, float]], judged: dict[str, dict[str, int]]
) -> dict[str, float]:
    """nDCG@10, recall@100 and MRR@10 through ir-measures (pytrec_eval underneath)."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    measures = [nDCG @ 10, R @ 10, R @ 100, RR @ 10]
    scores = ir_measures.calc_aggregate(measures, judged, run)
    return {str(m): float(scores[m]) for m in measures}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
