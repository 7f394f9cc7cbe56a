"""Recall@10 of the exact scan over int16 codes (schema 15) against float32 (issue 33).

    PYTHONPATH=src .venv/bin/python bench/exact_codes.py [--rows 8700] [--queries 300]

Before a store has its vector index, search scores the stored vectors themselves
(backends/sqlite/vector_index/exact.py). Since schema 15 they are int16 codes, not float32: this
writes random unit vectors of 384 dimensions (SciFact's count by default: random vectors
are the hardest case, with the most near-ties) through ``put_vectors``, runs the exact
scan for random queries and compares its top 10 with float32 cosine's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import trove
from trove.backends.sqlite.vector_index.exact import ExactScan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8_700)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    rng = np.random.default_rng(33)
    rows = rng.standard_normal((args.rows, args.dimension)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    queries = rng.standard_normal((args.queries, args.dimension)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        kb = trove.open(Path(folder) / "kb.db", embedder=f"hash:{args.dimension}")
        kb.add("a first document creates the vector table")
        lock = kb.backend.vector_lock()
        assert lock is not None
        ids = np.arange(1_000, 1_000 + args.rows)
        kb.backend.put_vectors(lock.table, ids.tolist(), rows)
        scan = ExactScan(kb.backend, lock.table)  # type: ignore[arg-type]
        found, apart, seconds = 0, 0.0, []
        for q in queries:
            scores = rows @ q
            want = np.argsort(-scores)[:10]
            start = time.process_time()
            got, got_scores = scan.search(q, 10)
            seconds.append(time.process_time() - start)
            found += len(set(ids[want].tolist()) & set(got.tolist()))
            apart = max(apart, float(np.abs(got_scores - scores[got - 1_000]).max()))
        kb.close()
    print(
        f"{args.rows} rows, {args.dimension}-d, {args.queries} queries: "
        f"recall@10 {found / (10 * args.queries):.4f}, largest score error {apart:.1e}, "
        f"CPU p50 {1e3 * float(np.median(seconds)):.1f} ms a query"
    )


if __name__ == "__main__":
    main()
