"""Bulk-write speed of ``Store.add_many`` without an embedder (and with given vectors).

    python bench/bulk.py [--docs 20000] [--into 0] [--repeat 3] [--batch 1000] [--profile]
    python bench/bulk.py --base bench/.cache/scale.db --vectors   # into a built store

Writes ``--docs`` one-chunk documents (~120 words of synthetic text) into a fresh store
that already holds ``--into`` documents (or into a copy of the store ``--base``, with its
index cache), ``--repeat`` times, and reports the median of chunks per wall second and
per CPU second (this process), with the load average. ``--vectors``: each document brings
its own unit vector (``add_many(vector=...)``; 384 dimensions, or the base store's), the
cost of writing precomputed vectors on top. "Through close" counts the close too: the
last connection's checkpoint copies what the write-ahead log still holds into the file.
Compare with it: a checkpoint also runs inside a write whenever the log passes ~40 MB,
so whether the write's own window pays for one depends on where that mark falls (10,000
documents without vectors log 37 MB and leave it all to the close; with vectors they
pass it, and pay a checkpoint and its fsync inside the write). ``--vectors-cost``
alternates runs without and with vectors, ``--repeat`` pairs in one process (the load
moves between separate runs more than the cost of vectors), and reports what vectors add:
the medians of each pair's extra wall (through close) and CPU time. ``--profile`` prints a
cProfile of the first run instead of timing it (sorted by ``$SORT``, default cumulative;
``$TOP`` lines, 35).
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

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


def items(n: int, seed: int, start: int = 0, dimension: int = 0) -> list[dict[str, Any]]:
    """``n`` documents; with ``dimension``, each with a unit vector of its own."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [
        {
            "text": " ".join(rng.choices(WORDS, k=120)) + f" doc{start + i}",
            "source": "bench",
            "source_id": f"b{start + i}",
        }
        for i in range(n)
    ]
    if dimension:
        vectors = np.random.default_rng(seed).standard_normal((n, dimension), np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for doc, vector in zip(docs, vectors, strict=True):
            doc["vector"] = vector
    return docs


def fill(path: Path, n: int) -> None:
    store = trove.open(str(path), embedder=None)
    for start in range(0, n, 20000):
        store.add_many(items(min(20000, n - start), 1, start=10_000_000 + start), batch_size=1000)
    store.close()


def copy_store(base: Path, path: Path) -> None:
    """A copy of the store ``base`` (its write-ahead log checkpointed first) and its index
    cache."""
    trove.open(str(base), embedder=None).close()  # the last connection checkpoints
    shutil.copyfile(base, path)
    cache = Path(f"{base}.trove-index")
    if cache.exists():
        shutil.copytree(cache, Path(f"{path}.trove-index"))


def dimension_of(path: Path) -> int:
    """The vector dimension of the store at ``path`` (384 if it has no vectors yet)."""
    with trove.open(str(path), embedder=None) as store:
        lock = store.backend.vector_lock()
    return lock.dimension if lock is not None else 384


def once(path: Path, docs: list[dict[str, Any]], batch: int) -> tuple[float, float, float]:
    """Wall and CPU seconds of the write, and wall seconds through the close."""
    store = trove.open(str(path), embedder=None)
    wall, cpu = time.perf_counter(), time.process_time()
    store.add_many(docs, batch_size=batch)
    written, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.close()
    return written, cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--into", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--base", type=Path, help="write into a copy of this store")
    parser.add_argument("--vectors", action="store_true", help="documents bring vectors")
    parser.add_argument("--vectors-cost", action="store_true", help="alternate without/with")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.vectors_cost:
        vectors_cost(args)
        return
    with base_store(args) as (tmp, base):
        docs = items(args.docs, 7, dimension=dimension_of(base) if args.vectors else 0)
        walls, cpus, closed = [], [], []
        for r in range(args.repeat):
            path = Path(tmp) / f"run{r}.db"
            copy_store(base, path)
            if args.profile and r == 0:
                prof = cProfile.Profile()
                prof.enable()
                once(path, docs, args.batch)
                prof.disable()
                stats = pstats.Stats(prof).sort_stats(os.environ.get("SORT", "cumulative"))
                stats.print_stats(int(os.environ.get("TOP", 35)))
                continue
            wall, cpu, through_close = once(path, docs, args.batch)
            walls.append(args.docs / wall)
            cpus.append(args.docs / cpu)
            closed.append(args.docs / through_close)
        if walls:
            into = args.base or args.into
            print(
                f"docs={args.docs} into={into} batch={args.batch} vectors={args.vectors} "
                f"chunks/s wall median {statistics.median(walls):,.0f} "
                f"cpu median {statistics.median(cpus):,.0f} "
                f"wall through close median {statistics.median(closed):,.0f} "
                f"(runs wall {[round(w) for w in walls]}) load {os.getloadavg()}"
            )


@contextmanager
def base_store(args: argparse.Namespace) -> Iterator[tuple[Path, Path]]:
    """A folder for the runs, and in it the store each run copies: a copy of ``--base``,
    or a fresh store filled with ``--into`` documents."""
    with tempfile.TemporaryDirectory(dir=args.base.parent if args.base else None) as tmp:
        base = Path(tmp) / "base.db"
        if args.base:
            copy_store(args.base, base)
        else:
            fill(base, args.into)
        yield Path(tmp), base


def vectors_cost(args: argparse.Namespace) -> None:
    """Pairs of runs without and with vectors, alternated; what vectors add, per pair."""
    with base_store(args) as (tmp, base):
        plain = items(args.docs, 7)
        given = items(args.docs, 7, dimension=dimension_of(base))
        walls: list[float] = []
        cpus: list[float] = []
        rates: list[tuple[float, float]] = []
        for r in range(args.repeat):
            times = []
            for kind, docs in (("plain", plain), ("vectors", given)):
                path = Path(tmp) / f"{kind}{r}.db"
                copy_store(base, path)
                _, cpu, through_close = once(path, docs, args.batch)
                times.append((through_close, cpu))
            (wall0, cpu0), (wall1, cpu1) = times
            walls.append(wall1 / wall0 - 1)
            cpus.append(cpu1 / cpu0 - 1)
            rates.append((args.docs / wall0, args.docs / wall1))
        print(
            f"docs={args.docs} into={args.base or args.into} batch={args.batch} "
            f"pairs={args.repeat}: vectors add wall (through close) median "
            f"{statistics.median(walls):+.1%} (pairs {[f'{w:+.0%}' for w in walls]}), "
            f"CPU median {statistics.median(cpus):+.1%}; chunks/s through close without "
            f"{statistics.median(r[0] for r in rates):,.0f}, with "
            f"{statistics.median(r[1] for r in rates):,.0f}; load {os.getloadavg()}"
        )


if __name__ == "__main__":
    main()
