"""Keyword (BM25 over FTS5) quality and speed through the public API.

    python bench/keyword_quality.py [--split-scifact test] [--split-cmrc dev]

Loads each data set into a fresh store with add_many, runs every judged query in
keyword mode and prints nDCG@10 / recall@100 / MRR@10, add_many throughput and query
latency (median and p95).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _data
import trove


def run(name: str, split: str, limit: int = 100) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        trove.open(Path(tmp) / "kb.db", embedder=None) as kb,
    ):
        docs = _data.documents(name)
        started = time.perf_counter()
        ids = kb.add_many(docs)
        load_s = time.perf_counter() - started
        to_beir = {doc_id: d["source_id"] for doc_id, d in zip(ids, docs, strict=True)}
        queries = _data.queries(name, split)
        run_: dict[str, dict[str, float]] = {}
        latencies = []
        for qid, text in queries.items():
            started = time.perf_counter()
            hits = kb.search(text, mode="keyword", limit=limit)
            latencies.append((time.perf_counter() - started) * 1000)
            run_[qid] = {to_beir[h.doc_id]: h.score for h in hits}
        scores = _data.evaluate(run_, _data.qrels(name, split))
    return {
        **scores,
        "docs": len(docs),
        "add_many docs/s": len(docs) / load_s,
        "p50 ms": _data.median(latencies),
        "p95 ms": _data.percentile(latencies, 0.95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact-split", default="test")
    parser.add_argument("--cmrc-split", default="dev")
    args = parser.parse_args()
    print(f"machine: {_data.machine()}")
    for name, split in (("scifact", args.scifact_split), ("cmrc2018", args.cmrc_split)):
        result = run(name, split)
        figures = "  ".join(
            f"{k} {v:.3f}" if isinstance(v, float) and v < 100 else f"{k} {v:.0f}"
            for k, v in result.items()
        )
        print(f"{name} ({split}): {figures}")


if __name__ == "__main__":
    main()
