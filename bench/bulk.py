"""Bulk-write speed of ``Store.add_many`` without an embedder (and with given vectors).

    python bench/bulk.py [--docs 20000] [--into 0] [--repeat 3] [--batch 1000] [--profile]

Writes ``--docs`` one-chunk documents (~120 words of synthetic text) into a fresh store
that already holds ``--into`` documents, ``--repeat`` times, and reports the median of
chunks per wall second and per CPU second (this process), with the load average.
``--profile`` prints a cProfile of the first run instead of timing it.
(Writes with precomputed vectors are not measured here yet.)
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import trove

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "store",
    "index",
    "query",
    "vector",
    "memory",
    "agent",
    "chunk",
    "write",
    "read",
    "search",
    "keyword",
    "semantic",
    "hybrid",
    "cache",
    "file",
    "page",
    "token",
    "model",
    "rank",
    "score",
    "time",
]


def items(n: int, seed: int, start: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "text": " ".join(rng.choices(WORDS, k=120)) + f" doc{start + i}",
            "source": "bench",
            "source_id": f"b{start + i}",
        }
        for i in range(n)
    ]


def fill(path: Path, n: int) -> None:
    store = trove.open(str(path), embedder=None)
    for start in range(0, n, 20000):
        store.add_many(items(min(20000, n - start), 1, start=10_000_000 + start), batch_size=1000)
    store.close()


def once(path: Path, docs: list[dict[str, Any]], batch: int) -> tuple[float, float]:
    store = trove.open(str(path), embedder=None)
    wall, cpu = time.perf_counter(), time.process_time()
    store.add_many(docs, batch_size=batch)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.close()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--into", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    docs = items(args.docs, 7)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.db"
        fill(base, args.into)
        walls, cpus = [], []
        for r in range(args.repeat):
            path = Path(tmp) / f"run{r}.db"
            shutil.copy(base, path)
            if args.profile and r == 0:
                prof = cProfile.Profile()
                prof.enable()
                once(path, docs, args.batch)
                prof.disable()
                pstats.Stats(prof).sort_stats("cumulative").print_stats(35)
                continue
            wall, cpu = once(path, docs, args.batch)
            walls.append(args.docs / wall)
            cpus.append(args.docs / cpu)
        if walls:
            print(
                f"docs={args.docs} into={args.into} batch={args.batch} "
                f"chunks/s wall median {statistics.median(walls):,.0f} "
                f"cpu median {statistics.median(cpus):,.0f} "
                f"(runs wall {[round(w) for w in walls]}) load {os.getloadavg()}"
            )


if __name__ == "__main__":
    main()
