"""Bulk writes into an empty PostgreSQL store beside an empty SQLite one, same documents.

    python bench/_scale_pg_bulk.py [--docs 5000] [--batch 1000] [--url URL] [--profile]

One-chunk documents of bench/bulk.py (~120 words of synthetic text), each with its own
384-d unit vector (``add_many(vector=...)``), written with ``add_many`` in batches into a
fresh schema of the scale benchmark's pgserver (bench/.cache/pg-scale, or ``--url``) and
into a fresh SQLite file; documents per wall second of each, of the writes and through
the close (PostgreSQL builds there an HNSW index set aside for the load), with the load
average.
``--profile``: a cProfile of the PostgreSQL write instead of the SQLite one.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import tempfile
import time
from pathlib import Path

import psycopg

import trove
from _scale_pg import server
from bulk import items


def write(target: str, docs: list[dict], batch: int) -> tuple[float, float]:
    """Seconds of the writes, and through the close (which builds an index set aside)."""
    kb = trove.open(target, embedder=None)
    began = time.perf_counter()
    try:
        kb.add_many(docs, batch_size=batch)
        written = time.perf_counter() - began
    finally:
        kb.close()
    return written, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--url")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    docs = items(args.docs, 7, dimension=384)
    result: dict = {"docs": args.docs, "batch": args.batch, "load_before": os.getloadavg()}
    with server(args.url) as url, tempfile.TemporaryDirectory() as tmp:
        schema = "bulk_bench"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        pg = f"{url}{'&' if '?' in url else '?'}schema={schema}"
        trove.open(pg, embedder=None).close()  # the schema built outside the timing
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(write, pg, docs, args.batch)
            pstats.Stats(profile).sort_stats(os.environ.get("SORT", "cumulative")).print_stats(30)
            return
        for name, target in (("sqlite", str(Path(tmp) / "kb.db")), ("pg", pg)):
            written, closed = write(target, docs, args.batch)
            result[f"{name}_docs_per_s"] = round(args.docs / written, 1)
            result[f"{name}_docs_per_s_through_close"] = round(args.docs / closed, 1)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    result["load_after"] = os.getloadavg()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
