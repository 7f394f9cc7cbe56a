"""Writes into the large PostgreSQL scale store, and semantic search right after them.

    PYTHONPATH=src python bench/_scale_pg_delta.py [--docs 5000] [--seed 11] [--url URL]

``--docs`` one-chunk documents of bench/bulk.py (~120 words, each with its own 384-d
unit vector, given through a look-up embedder) written by ``add_many`` in batches of
1,000 into the scale schema (bench/_scale_pg.py: the pgserver in bench/.cache/pg-scale,
which must be running with the schema built and indexed; or the server at ``--url``, a
schema ``scale`` built the same way, such as a 1M-chunk one). Prints one JSON line: docs/s
of the write and through the close, the rows left outside the vector table's own graph
at the close (in its delta and sealed segments; 0 on code without them) and the number of
segments, semantic p50/p95 of 50 SciFact claims at limit 10 in a
fresh reader right after, and the load. The documents are purged afterwards, so the
schema holds what it held before (with dead rows until vacuum). ``--no-delta``: every
batch into the indexed table, as before delta.py (``DELTA_FROM`` set out of reach).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import _vectors
import trove
from _scale_pg import PG_ROOT, target
from bulk import items
from trove.backends.postgres import delta
from trove.embedders.vectorizer import embedding_text

PURGE_BATCH = 2_000
URL = f"postgresql://postgres:@/postgres?host={PG_ROOT / 'data'}"


def _pending(kb: trove.Store) -> dict[str, int]:
    """Rows of the vector table outside its own graph (in its delta or, on code that has
    them, its sealed segments), and how many segments."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    one = kb.backend.one  # type: ignore[attr-defined]
    rows = one(f"SELECT count(*) FROM {lock.table} WHERE tableoid <> %s::regclass", (lock.table,))
    held = one(
        "SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass "
        "AND inhrelid::regclass::text LIKE %s",
        (lock.table, f"{lock.table}_seg_%"),
    )
    return {"pending_at_close": int(rows[0]), "segments_at_close": int(held[0])}


def _latency(store: str) -> dict[str, float]:
    queries = _vectors.queries("scifact", "test")
    embedder = _vectors.CachedEmbedder(queries.texts, queries.vectors, strict=True)
    took = []
    with trove.open(store, embedder=embedder) as kb:
        for text in queries.texts[:3]:
            kb.search(text, mode="semantic", limit=10)
        for text in queries.texts[3:53]:
            began = time.perf_counter()
            kb.search(text, mode="semantic", limit=10)
            took.append((time.perf_counter() - began) * 1000)
    return {
        "semantic_p50_ms": float(np.median(took)),
        "semantic_p95_ms": float(np.percentile(took, 95)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-delta", action="store_true")
    parser.add_argument("--url", default=URL, help="the server (default: bench/.cache's)")
    args = parser.parse_args()
    if args.no_delta:
        delta.DELTA_FROM = 10**12
    store = target(args.url)
    docs = items(args.docs, args.seed, start=30_000_000, dimension=384)
    texts = [embedding_text("", d["text"]) for d in docs]
    plain = [{k: v for k, v in d.items() if k != "vector"} for d in docs]
    embedder = _vectors.CachedEmbedder(texts, [d["vector"] for d in docs], strict=True)  # type: ignore[arg-type]
    result: dict[str, object] = {"docs": args.docs, "delta": not args.no_delta}
    result["load_before"] = os.getloadavg()[0]
    kb = trove.open(store, embedder=embedder)
    result["documents_before"] = kb.stats().documents
    began = time.perf_counter()
    try:
        ids = kb.add_many(plain, batch_size=1_000)
        written = time.perf_counter() - began
    finally:
        kb.close()
    closed = time.perf_counter() - began
    with trove.open(store, embedder=None) as kb:
        result.update(_pending(kb))
    result["docs_per_s"] = round(args.docs / written, 1)
    result["docs_per_s_through_close"] = round(args.docs / closed, 1)
    result.update(_latency(store))
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result), flush=True)
    with trove.open(store, embedder=None) as kb:
        # In batches, for code before 37ffd34, where a purge took a lock a document and
        # past ~6,000 in one transaction PostgreSQL's lock table ran out of shared memory.
        for at in range(0, len(ids), PURGE_BATCH):
            kb.purge(ids[at : at + PURGE_BATCH])


if __name__ == "__main__":
    main()
