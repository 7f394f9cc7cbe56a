"""Keyword search and keyword-only ingest, PostgreSQL beside SQLite on the same documents.

    python bench/pg_keyword.py --size 100000 [--queries 100] [--url URL]

No vectors (keyword only), so no model or cached vectors are needed: documents are made
as bench/scale.py makes them (2-5 consecutive sentences of a SciFact or CMRC chunk, then
1-3 of another, capped at 1,100 characters: one chunk each) except that the second chunk
is drawn at random rather than among the first's nearest neighbours. Both stores live in
bench/.cache (pg: the scale benchmark's pgserver, schema ``kw``) and are grown, not
rebuilt, across runs. Queries are SciFact test claims at limit 10, each searched on one
backend then the other (alternating which goes first), so the two see the same load;
also how many of each query's top 10 documents the two backends share.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path

import numpy as np

import _data
import trove
from _scale_pg import server

CACHE = Path(__file__).resolve().parent / ".cache"
SEED = 20261204
MAX_CHARS = 1_100
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def material() -> tuple[list[str], list[list[str]]]:
    docs = [d for name in ("scifact", "cmrc2018") for d in _data.corpus(name)]
    titles = [d.get("title", "") for d in docs]
    sentences = [[s.strip() for s in _SENTENCE.split(d["text"]) if s.strip()] for d in docs]
    return titles, sentences


def block(start: int, count: int, titles: list[str], sentences: list[list[str]]) -> list[dict]:
    rng = np.random.default_rng([SEED, start])
    out = []
    for i in range(count):
        a, b = (int(x) for x in rng.integers(0, len(sentences), 2))
        own = _run(sentences[a], int(rng.integers(2, 6)), rng)
        other = _run(sentences[b], int(rng.integers(1, 4)), rng)
        text = " ".join(own + other)[:MAX_CHARS].strip() or titles[a] or "empty"
        out.append({"title": titles[a], "text": text, "source": "kw", "source_id": str(start + i)})
    return out


def _run(sentences: list[str], length: int, rng: np.random.Generator) -> list[str]:
    begin = int(rng.integers(0, max(1, len(sentences) - length + 1)))
    return sentences[begin : begin + length]


def grow(target: str, size: int, material: tuple[list[str], list[list[str]]]) -> dict:
    with trove.open(target, embedder=None) as kb:
        have = kb.stats().documents // 1_000 * 1_000
        began = time.perf_counter()
        for at in range(have, size, 1_000):
            kb.add_many(block(at, min(1_000, size - at), *material), batch_size=1_000)
        wall = time.perf_counter() - began
    added = size - have
    return {"added": added, "docs_per_s": round(added / wall, 1) if added else None}


def measure(targets: dict[str, str], queries: list[str]) -> dict:
    stores = {name: trove.open(t, embedder=None) for name, t in targets.items()}
    times: dict[str, list[float]] = {name: [] for name in stores}
    shared = []
    warm: dict[str, float] = {}
    try:
        for name, kb in stores.items():  # warm: the in-memory word index (SQLite) or the
            began = time.perf_counter()  # most frequent terms' postings (PostgreSQL)
            kb.warm()
            warm[name] = round(time.perf_counter() - began, 2)
            kb.search(queries[0], mode="keyword", limit=10)
        for i, query in enumerate(queries):
            order = list(stores) if i % 2 == 0 else list(reversed(stores))
            found = {}
            for name in order:
                began = time.perf_counter()
                hits = stores[name].search(query, mode="keyword", limit=10, record_access=False)
                times[name].append((time.perf_counter() - began) * 1000)
                found[name] = [h.doc_id for h in hits]
            a, b = found.values()
            shared.append(len(set(a) & set(b)))
    finally:
        for kb in stores.values():
            kb.close()
    out: dict = {"queries": len(queries), "shared_top10_mean": statistics.mean(shared)}
    out["warm_s"] = warm
    for name, ms in times.items():
        ms.sort()
        out[f"{name}_p50_ms"] = round(statistics.median(ms), 2)
        out[f"{name}_p95_ms"] = round(ms[round(0.95 * (len(ms) - 1))], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url")
    parser.add_argument(
        "--schema", help="default kw_SIZE (another, to compare two trove versions)"
    )
    args = parser.parse_args()
    made = material()
    queries = list(_data.queries("scifact", "test").values())[: args.queries]
    CACHE.mkdir(exist_ok=True)
    sqlite_path = str(CACHE / f"kw-{args.size}.db")
    with server(args.url) as url:
        schema = args.schema or f"kw_{args.size}"
        pg = f"{url}{'&' if '?' in url else '?'}schema={schema}"
        result = {
            "size": args.size,
            "build": {
                "sqlite": grow(sqlite_path, args.size, made),
                "pg": grow(pg, args.size, made),
            },
            "load_before": os.getloadavg(),
        }
        result.update(measure({"sqlite": sqlite_path, "pg": pg}, queries))
        result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
