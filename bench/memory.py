"""Agent-memory costs (issue 16): search latency with access recording on vs off, and
the time of canonicalize, at 100k documents of one chunk each.

    python bench/memory.py                      # 100k documents, 384-d vectors
    python bench/memory.py --docs 20000         # quicker

The corpus is synthetic (the figures measure the store, not a model): each document is
30 words drawn from a Zipf-distributed vocabulary of 20,000 made-up words, with its own
unit vector (callers' vectors, ``add(vector=...)``); 1% of the documents are
near-duplicates of another (the same text plus a word, the vector plus small noise), so
canonicalize has groups to find. Queries: 300 keyword queries of 3 vocabulary words and
300 raw-vector queries. Access recording on and off alternate query by query, so load
drift on a shared machine hits both alike. Results: bench/results/memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import trove

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"


def corpus(n: int, dim: int, seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}x{rng.integers(1000)}" for i in range(20000)]
    ranks = np.minimum(rng.zipf(1.3, size=(n, 30)) - 1, len(vocab) - 1)
    texts = [" ".join(vocab[r] for r in row) for row in ranks]
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    for i in range(0, n, 100):  # 1%: a near-duplicate of the document before it
        if i > 0:
            texts[i] = texts[i - 1] + " " + vocab[int(rng.integers(len(vocab)))]
            vectors[i] = vectors[i - 1] + 0.05 * rng.standard_normal(dim)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors, vocab


def build(path: Path, texts: list[str], vectors: np.ndarray) -> float:
    start = time.perf_counter()
    with trove.open(path, embedder=None) as kb:
        for at in range(0, len(texts), 1000):
            kb.add_many(
                {"text": t, "source_id": str(at + i), "vector": vectors[at + i].tolist()}
                for i, t in enumerate(texts[at : at + 1000])
            )
    return time.perf_counter() - start


def latency(path: Path, vocab: list[str], dim: int, queries: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    words = [" ".join(rng.choice(vocab[:2000], 3)) for _ in range(queries)]
    probes = rng.standard_normal((queries, dim))
    times: dict[str, list[float]] = {
        f"{kind}_{state}": [] for kind in ("keyword", "vector") for state in ("on", "off")
    }
    with trove.open(path, embedder=None) as kb:
        kb.warm()
        kb.search(words[0])
        for i in range(queries):
            for state, record in (("on", True), ("off", False))[:: 1 if i % 2 else -1]:
                start = time.perf_counter()
                kb.search(words[i], record_access=record)
                times[f"keyword_{state}"].append(time.perf_counter() - start)
                start = time.perf_counter()
                kb.search(vector=probes[i].tolist(), record_access=record)
                times[f"vector_{state}"].append(time.perf_counter() - start)
    return {k: round(statistics.median(v) * 1000, 3) for k, v in times.items()}


def canonicalize_time(path: Path) -> tuple[float, int]:
    with trove.open(path, embedder=None, record_access=False) as kb:
        start = time.perf_counter()
        groups = kb.canonicalize(threshold=0.95, dry_run=True)
        return time.perf_counter() - start, len(groups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    texts, vectors, vocab = corpus(args.docs, args.dim)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        built = build(path, texts, vectors)
        p50 = latency(path, vocab, args.dim, args.queries)
        took, groups = canonicalize_time(path)
    result = {
        "docs": args.docs,
        "dim": args.dim,
        "build_s": round(built, 1),
        "p50_ms": p50,
        "keyword_overhead_pct": round(100 * (p50["keyword_on"] / p50["keyword_off"] - 1), 1),
        "vector_overhead_pct": round(100 * (p50["vector_on"] / p50["vector_off"] - 1), 1),
        "canonicalize_s": round(took, 1),
        "duplicate_groups": groups,
        "load": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
