"""Benchmark trove's in-memory vector index against an exact float32 numpy scan.

    python bench/vector_index.py                       # 10k, 100k, 1M synthetic 384-d
    python bench/vector_index.py --sizes 100000 --sweep
    python bench/vector_index.py --vectors emb.npy     # real embeddings, (n, d) float32

Each size runs in its own process, so "peak RSS" is that size's alone. The index is built
from vectors made (or read) in batches of 10,000, the way the store loads it from SQLite,
and the exact top-10 for every query is kept up to date batch by batch, so the float32
matrix is never in memory while the index is measured: peak RSS is the index, numpy and
the batch. Only afterwards is the float32 matrix made, for the exact-scan baseline.

Synthetic vectors. Real sentence embeddings are clustered (topics) and anisotropic: they
share a mean direction and a few directions carry most of the variance. Uniform random
unit vectors have neither, which makes them unrealistic for a sign-bit sketch in both
directions, so the generator draws a mixture of Gaussians:
  - one shared mean direction, weight 0.35 (pairwise cosine of random rows ~0.1);
  - 300 cluster centres, with Zipf-like popularity (weight ~ 1/rank^0.8);
  - per-dimension standard deviations falling as a power law (1/sqrt(rank)), randomly
    assigned to dimensions, for the centres and for the spread around them (0.7);
  - every row L2-normalized. Nearest-neighbour cosine is then ~0.8 at 100k rows.
Queries are 200 held-out rows plus Gaussian noise (cosine ~0.9 to their source),
renormalized. With --vectors, the file's last 200 rows are the held-out sources.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np

from trove.backends.sqlite.vector_index import index as vectors_module
from trove.backends.sqlite.vector_index.index import VectorIndex

BATCH = 10_000
K = 10


def clustered(start: int, count: int, dim: int, seed: int) -> np.ndarray:
    """Rows [start, start + count) of one deterministic synthetic set (see module doc)."""
    shape = np.random.default_rng(seed)
    scale = shape.permutation((1.0 + np.arange(dim)) ** -0.5)
    scale /= np.sqrt((scale**2).mean() * dim)
    mean = shape.standard_normal(dim)
    mean /= np.linalg.norm(mean)
    centres = shape.standard_normal((300, dim)) * scale + 0.35 * mean
    weights = 1.0 / (1.0 + np.arange(300)) ** 0.8
    rows = np.random.default_rng([seed, start, count])
    members = rows.choice(300, size=count, p=weights / weights.sum())
    x = centres[members] + 0.7 * rows.standard_normal((count, dim)) * scale
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def perturb(x: np.ndarray, seed: int) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(x.shape) * 0.5 / np.sqrt(x.shape[1])
    q = x + noise.astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


class Source:
    """The n indexed rows, batch by batch, and the query sources, held out."""

    def __init__(self, n: int, dim: int, seed: int, path: str | None, queries: int) -> None:
        self.n, self.dim, self.seed = n, dim, seed
        self.file = np.load(path, mmap_mode="r") if path else None
        if self.file is not None:
            self.dim = self.file.shape[1]
            held_out = np.asarray(self.file[-queries:], np.float32)
            if n > len(self.file) - queries:
                raise SystemExit(f"{path} has {len(self.file)} rows: too few for {n} + queries")
        else:
            held_out = clustered(10**12, queries, dim, seed)  # a range never indexed
        self.queries = perturb(held_out, seed + 1)

    def batches(self) -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, self.n, BATCH):
            count = min(BATCH, self.n - start)
            if self.file is not None:
                yield start, np.asarray(self.file[start : start + count], np.float32)
            else:
                yield start, clustered(start, count, self.dim, self.seed)


def timed(search: Callable[[np.ndarray], np.ndarray], queries: np.ndarray) -> tuple:
    search(queries[0])  # warm caches
    found, times = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(search(q))
        times.append(time.perf_counter() - t)
    ms = np.array(times) * 1e3
    return found, float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(
        np.mean([len(np.intersect1d(f[:K], t)) / K for f, t in zip(found, truth, strict=True)])
    )


def run_one(n: int, args: argparse.Namespace) -> dict:
    source = Source(n, args.dim, args.seed, args.vectors, args.queries)
    queries = source.queries
    index = VectorIndex(source.dim)
    best_ids = np.zeros((len(queries), 0), np.int64)
    best_scores = np.zeros((len(queries), 0), np.float32)
    build = 0.0
    for start, x in source.batches():
        ids = np.arange(start + 1, start + len(x) + 1, dtype=np.int64)  # rowids
        t = time.perf_counter()
        for lo in range(0, len(x), args.add_batch):
            index.add(ids[lo : lo + args.add_batch], x[lo : lo + args.add_batch])
        build += time.perf_counter() - t
        # Exact float32 top-K so far, merged batch by batch.
        scores = np.concatenate([best_scores, queries @ x.T], axis=1)
        candidates = np.concatenate([best_ids, np.broadcast_to(ids, (len(queries), len(ids)))], 1)
        top = np.argsort(-scores, axis=1)[:, :K]
        best_scores = np.take_along_axis(scores, top, 1)
        best_ids = np.take_along_axis(candidates, top, 1)
    allowed = np.sort(np.random.default_rng(args.seed).choice(n, n // 10, replace=False)) + 1
    found, p50, p95 = timed(lambda q: index.search(q, K)[0], queries)
    found_f, fp50, fp95 = timed(lambda q: index.search(q, K, allowed)[0], queries)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sweep = {}
    if args.sweep:
        chosen = vectors_module._OVERSAMPLE, vectors_module._FRACTION
        for oversample, fraction in [(20, n + 1), (50, n + 1), (100, 512), (100, 256), (100, 128)]:
            vectors_module._OVERSAMPLE, vectors_module._FRACTION = oversample, fraction
            got, s50, _ = timed(lambda q: index.search(q, K)[0], queries)
            label = f"{oversample}*k" + (f", n/{fraction}" if fraction <= n else "")
            sweep[label] = (round(recall(got, best_ids), 3), s50)
        vectors_module._OVERSAMPLE, vectors_module._FRACTION = chosen
    # Baseline: the whole float32 matrix in RAM, scanned exactly.
    matrix = np.concatenate([x for _, x in source.batches()])
    rows = allowed - 1
    exact, ep50, ep95 = timed(lambda q: np.argpartition(-(matrix @ q), K)[:K] + 1, queries)
    truth_f = [rows[np.argsort(-(matrix[rows] @ q))[:K]] + 1 for q in queries]
    _, efp50, efp95 = timed(lambda q: rows[np.argpartition(-(matrix[rows] @ q), K)[:K]], queries)
    return {
        "n": n,
        "dim": source.dim,
        "build_s": build,
        "index_mb": index.nbytes / 2**20,
        "peak_rss_mb": peak_mb,
        "p50": p50,
        "p95": p95,
        "recall": recall(found, best_ids),
        "f_p50": fp50,
        "f_p95": fp95,
        "f_recall": recall(found_f, np.array(truth_f)),
        "exact_p50": ep50,
        "exact_p95": ep95,
        "exact_recall": recall(exact, best_ids),
        "exact_f_p50": efp50,
        "exact_f_p95": efp95,
        "float32_mb": matrix.nbytes / 2**20,
        "sweep": sweep,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--add-batch", type=int, default=1_000, help="rows per add() call")
    parser.add_argument("--vectors", help=".npy file of (n, d) float32 unit rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweep", action="store_true", help="also try other candidate counts")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child run
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args)))
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"# {platform.processor() or platform.machine()}, {cores} cores, numpy {np.__version__}")
    print(f"# data: {args.vectors or 'synthetic clustered'}, k={K}, {args.queries} queries")
    head = "{:>9} {:>7} {:>8} {:>8} | {:>13} {:>6} | {:>13} {:>6} | {:>13} {:>13}"
    print(
        head.format(
            "n",
            "build s",
            "index MB",
            "peak MB",
            "index p50/p95",
            "rec@10",
            "filt p50/p95",
            "rec@10",
            "f32 p50/p95",
            "f32 filt",
        )
    )
    for n in args.sizes:
        child = [sys.executable, __file__, *sys.argv[1:], "--one", str(n)]
        r = json.loads(subprocess.run(child, check=True, capture_output=True).stdout)
        row = "{:>9,} {:>7.1f} {:>8.0f} {:>8.0f} | {:>6.1f}/{:<6.1f} {:>6.3f} | {:>6.1f}/{:<6.1f}"
        row += " {:>6.3f} | {:>6.1f}/{:<6.1f} {:>6.1f}/{:<6.1f}"
        print(
            row.format(
                r["n"],
                r["build_s"],
                r["index_mb"],
                r["peak_rss_mb"],
                r["p50"],
                r["p95"],
                r["recall"],
                r["f_p50"],
                r["f_p95"],
                r["f_recall"],
                r["exact_p50"],
                r["exact_p95"],
                r["exact_f_p50"],
                r["exact_f_p95"],
            )
        )
        for setting, (rec, p50) in r["sweep"].items():
            print(f"{'':>9}   rescore max({setting}) rows: recall@10 {rec:.3f}, p50 {p50:.1f} ms")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
