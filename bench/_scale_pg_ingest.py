"""Ingest into the 100k scale store against an empty one, PostgreSQL beside SQLite.

    python bench/_scale_pg_ingest.py [--size 100000] [--docs 1000] [--url URL]

One batch of ``--docs`` one-chunk documents of bench/bulk.py (~120 words of synthetic
text, each with its own 384-d unit vector, given through a look-up embedder so the store's
default-model lock holds) written by one ``add_many`` into: a fresh PostgreSQL schema, the
scale schema (bench/_scale_pg.py, which must hold ``--size`` documents), a fresh SQLite
file, and a copy of bench/.cache/scale-<size>.db. Documents per wall second of the write
and through the close. The documents written into the scale schema are purged afterwards,
so it holds ``--size`` again (with dead rows until vacuum).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import psycopg

import _vectors
import scale
import trove
from _scale_pg import server, target
from bulk import items
from trove.embedders.vectorizer import embedding_text


def write(store: str, docs: list[dict], purge: bool) -> dict[str, float]:
    """The write's and the close's docs/s; with ``purge``, the documents removed after."""
    texts = [embedding_text("", d["text"]) for d in docs]
    vectors = [d["vector"] for d in docs]
    plain = [{k: v for k, v in d.items() if k != "vector"} for d in docs]
    embedder = _vectors.CachedEmbedder(texts, vectors, strict=True)  # type: ignore[arg-type]
    kb = trove.open(store, embedder=embedder)
    before = kb.stats().documents
    load = os.getloadavg()[0]
    began = time.perf_counter()
    try:
        ids = kb.add_many(plain, batch_size=len(plain))
        written = time.perf_counter() - began
    finally:
        kb.close()
    closed = time.perf_counter() - began
    if purge:
        with trove.open(store, embedder=None) as kb:
            kb.purge(ids)
    return {
        "documents_before": before,
        "docs_per_s": round(len(docs) / written, 1),
        "docs_per_s_through_close": round(len(docs) / closed, 1),
        "load": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--url")
    args = parser.parse_args()
    docs = items(args.docs, 11, start=20_000_000, dimension=384)
    result: dict = {"docs": args.docs, "size": args.size, "load_before": os.getloadavg()[0]}
    with server(args.url) as url, tempfile.TemporaryDirectory() as tmp:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS ingest_empty CASCADE")
        empty = f"{url}{'&' if '?' in url else '?'}schema=ingest_empty"
        trove.open(empty, embedder=None).close()  # the schema made outside the timing
        copy = Path(tmp) / "scale.db"
        shutil.copyfile(scale.snapshot(args.size), copy)
        runs = (
            ("sqlite_empty", str(Path(tmp) / "kb.db"), False),
            ("postgres_empty", empty, False),
            ("sqlite_full", str(copy), False),
            ("postgres_full", target(url), True),
        )
        for name, store, purge in runs:
            result[name] = write(store, docs, purge)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS ingest_empty CASCADE")
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
