"""PostgreSQL at scale: ``python bench/scale.py --backend postgres [--sizes 100000] [--url URL]``.

The same synthetic documents and vectors as the SQLite scale store (scale.Material, the
same seeds), written with ``add_many`` in batches of 1,000 into one PostgreSQL schema
(``scale``): into a server given by ``--url``, or else a server kept between runs in
bench/.cache/pg-scale (shared_buffers 1 GB, everything else PostgreSQL's defaults,
fsync on). The build resumes where it stopped, as the SQLite one does.

Each measurement runs in a fresh process (``python bench/_scale_pg.py --measure URL``),
as for SQLite: SciFact test claims at limit 10 in each mode (query vectors cached; all
300 in semantic mode, the first SAMPLE in keyword and hybrid mode), recall@10 of
semantic search against an exact float32 scan of the vectors the schema holds (the same
tie rule as scale.py), the statements each search sends (round trips), and recall and
latency of the bare HNSW query at several ``hnsw.ef_search``. Right after it, the SQLite
store of the same size (bench/.cache/scale[-N].db) is measured by scale.py's own child,
so the two rows are back to back at the same load.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

import _data
import _pgserver
import _vectors
import scale
import trove
from _scale_pg_report import SAMPLE
from trove.backends.postgres import hnsw
from trove.backends.postgres.vectors import as_array
from trove.embedders.vectorizer import embedding_text
from trove.errors import QueryTimeout

PG_ROOT = _vectors.CACHE / "pg-scale"
SCHEMA = "scale"
RESULTS = Path(__file__).resolve().parent / "results" / "scale-postgres.json"
SHARED_BUFFERS = "1GB"
# The HNSW build at the close: pgvector builds in memory while the graph fits, on disk
# (much slower) past it; 1M 384-d vectors take about 3 GB (bulk.build_memory keeps it).
BUILD_MEMORY = "4GB"
EF_SEARCH = (40, 100, 200, 400)


@contextmanager
def server(url: str | None) -> Iterator[str]:
    """The server's URL (no schema): the one given, or the one in bench/.cache."""
    if url:
        yield url
        return
    pg = _pgserver.start(PG_ROOT / "data", cleanup_mode="stop")
    with psycopg.connect(pg.get_uri(), autocommit=True) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
        if row is None or row[0] != SHARED_BUFFERS:
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{SHARED_BUFFERS}'")
            restart = True
        else:
            restart = False
        conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{BUILD_MEMORY}'")
        conn.execute("SELECT pg_reload_conf()")
    if restart:
        _pgserver.restart(pg)
    try:
        yield str(pg.get_uri())
    finally:
        pg.cleanup()


def target(url: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={SCHEMA}"


def built(store: str) -> int:
    with trove.open(store, embedder=None) as kb:
        return kb.stats().documents


def grow(store: str, material: scale.Material, size: int) -> dict[str, float]:
    """scale.grow on PostgreSQL: add documents until the schema holds ``size``."""
    start = built(store) // scale.BLOCK * scale.BLOCK
    embedder = _vectors.CachedEmbedder(strict=True)
    write_s = 0.0
    began_all = time.perf_counter()
    with trove.open(store, embedder=embedder) as kb:
        lock = kb.backend.vector_lock()
        if lock is not None:
            # A build resumed into a large table still copies with the index set aside
            # (bulk.py sets it aside only into a small one): built once at the close.
            with kb.backend.conn() as conn:  # type: ignore[attr-defined]
                form, _ = hnsw.form_of(conn, lock.table)
            kb.backend.__dict__.setdefault("_aside", {})[lock.table] = form
        for at in range(start, size, scale.BLOCK):
            docs, block = material.block(at, min(scale.BLOCK, size - at))
            embedder.table = {
                embedding_text(d["title"], d["text"]): v for d, v in zip(docs, block, strict=True)
            }
            began = time.perf_counter()
            kb.add_many(({"source": "scale", **d} for d in docs), batch_size=1_000)
            write_s += time.perf_counter() - began
            print(f"  {at + len(docs):,} documents, {write_s:.0f} s writing", file=sys.stderr)
        closing = time.perf_counter()
    # The close builds the HNSW index a bulk load set aside: part of the build.
    close_s = time.perf_counter() - closing
    total = time.perf_counter() - began_all
    return {"added": size - start, "write_s": write_s, "close_s": close_s, "build_s": total}


def _vector_table(kb: trove.Store) -> str:
    lock = kb.backend.vector_lock()
    assert lock is not None
    return lock.table


def exact_top(store: str, queries: np.ndarray) -> dict[str, np.ndarray]:
    """scale.exact_top over the vectors the schema holds."""
    with trove.open(store, embedder=None) as kb:
        rows = kb.backend.rows(f"SELECT embedding FROM {_vector_table(kb)}")  # type: ignore[attr-defined]
    vectors = np.stack([as_array(r[0]) for r in rows])
    scores = queries @ vectors.T
    top = np.argpartition(-scores, scale.K, axis=1)[:, : scale.K]
    return {"kth": np.take_along_axis(scores, top, 1).min(axis=1)}


# --- measuring (in a child process) -----------------------------------------------------


def measure(store: str, truth_path: Path) -> dict[str, Any]:
    queries = _vectors.queries("scifact", "test")
    embedder = _vectors.CachedEmbedder(queries.texts, queries.vectors, strict=True)
    kth = np.load(truth_path)["kth"]
    result: dict[str, Any] = {}
    with trove.open(store, embedder=embedder) as kb:
        began = time.perf_counter()
        kb.warm()
        result["index_load_s"] = time.perf_counter() - began
        found: list[list[str]] = []
        for mode in ("keyword", "semantic", "hybrid"):
            for text in queries.texts[:3]:
                with contextlib.suppress(QueryTimeout):
                    kb.search(text, mode=mode)
            latencies, timeouts = [], 0
            texts = queries.texts if mode == "semantic" else queries.texts[:SAMPLE]
            for text in texts:
                began = time.perf_counter()
                try:
                    hits = kb.search(text, mode=mode, limit=scale.K)
                except QueryTimeout:  # past the 5 s budget: counted, at the time it took
                    hits, timeouts = [], timeouts + 1
                latencies.append((time.perf_counter() - began) * 1000)
                if mode == "semantic":
                    found.append([h.doc_id for h in hits])
            result[f"{mode}_timeouts"] = timeouts
            result[f"{mode}_p50_ms"] = float(np.percentile(latencies, 50))
            result[f"{mode}_p95_ms"] = float(np.percentile(latencies, 95))
            result[f"{mode}_statements"] = _statements(kb, queries.texts[:5], mode)
        result["recall_at_10"] = _recall(kb, queries.vectors, found, kth)
        result["ef_search"] = _ef_sweep(kb, queries.vectors, kth)
        stats = kb.stats()
        result["documents"] = stats.documents
        result["file_mb"] = stats.file_bytes / 2**20
        result["server"] = _settings(kb)
        folder = kb.backend.one("SELECT current_setting('data_directory')")  # type: ignore[attr-defined]
        result.update(server_memory(Path(folder[0])))  # while this client's backend lives
    result["peak_rss_mb"] = scale.peak_rss_mb()
    return result


def server_memory(data: Path) -> dict[str, float]:
    """RSS and PSS (MB) of the server's postmaster and its children, summed. RSS counts
    the shared buffers once per process that touched them; PSS shares them out."""
    postmaster = (data / "postmaster.pid").read_text().split()[0]
    rss = pss = 0.0
    count = 0
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit():
                continue
            status = (proc / "status").read_text()
            parent = next(x.split()[1] for x in status.splitlines() if x.startswith("PPid:"))
            if postmaster not in (proc.name, parent):
                continue
            lines = (proc / "smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        count += 1
        for line in lines:
            if line.startswith("Rss:"):
                rss += int(line.split()[1]) / 1024
            elif line.startswith("Pss:"):
                pss += int(line.split()[1]) / 1024
    return {"server_processes": count, "server_rss_mb": rss, "server_pss_mb": pss}


def _statements(kb: trove.Store, texts: list[str], mode: str) -> float:
    """Statements sent to the server per search (each one a round trip)."""
    sent = 0
    execute = psycopg.Cursor.execute

    def counted(self: psycopg.Cursor, *args: Any, **kwargs: Any) -> Any:
        nonlocal sent
        sent += 1
        return execute(self, *args, **kwargs)

    psycopg.Cursor.execute = counted  # type: ignore[method-assign]
    try:
        for text in texts:
            with contextlib.suppress(QueryTimeout):
                kb.search(text, mode=mode, limit=scale.K)
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    return sent / len(texts)


def _recall(
    kb: trove.Store, queries: np.ndarray, found: list[list[str]], kth: np.ndarray
) -> float:
    shares = []
    query = (
        f"SELECT v.embedding FROM chunk c JOIN {_vector_table(kb)} v ON v.chunk_id = c.id "
        "WHERE c.doc_id = ANY(%s)"
    )
    for q, docs, floor in zip(queries, found, kth, strict=True):
        rows = kb.backend.rows(query, (docs,))  # type: ignore[attr-defined]
        scores = [float(as_array(r[0]) @ q) for r in rows]
        shares.append(sum(s >= floor - 1e-6 for s in scores) / scale.K)
    return float(np.mean(shares))


def _ef_sweep(kb: trove.Store, queries: np.ndarray, kth: np.ndarray) -> dict[str, Any]:
    """The bare HNSW top 10 at each ef_search, by the distance the table's index is
    built over (hnsw.py): recall@10 (chunks) and p50 ms."""
    out: dict[str, Any] = {}
    table = _vector_table(kb)
    with kb.backend.conn() as conn:  # type: ignore[attr-defined]
        form, _ = hnsw.form_of(conn, table)
    order = form.distance()
    query = f"SELECT embedding FROM {table} ORDER BY {order} LIMIT {scale.K}"
    for ef in EF_SEARCH:
        shares, latencies = [], []
        with kb.backend.transaction(), kb.backend.conn() as conn:  # type: ignore[attr-defined]
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
            for q, floor in zip(queries, kth, strict=True):
                began = time.perf_counter()
                rows = conn.execute(query, (q,)).fetchall()
                latencies.append((time.perf_counter() - began) * 1000)
                scores = [float(as_array(r[0]) @ q) for r in rows]
                shares.append(sum(s >= floor - 1e-6 for s in scores) / scale.K)
        out[str(ef)] = {"recall": float(np.mean(shares)), "p50_ms": float(np.median(latencies))}
    return out


def _settings(kb: trove.Store) -> dict[str, str]:
    names = (
        "server_version",
        "shared_buffers",
        "work_mem",
        "maintenance_work_mem",
        "effective_cache_size",
    )
    rows = kb.backend.rows(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
        (list(names),),
    )  # type: ignore[attr-defined]
    found = {str(k): str(v) for k, v in rows}
    version = kb.backend.one("SELECT extversion FROM pg_extension WHERE extname = 'vector'")  # type: ignore[attr-defined]
    found["pgvector"] = str(version[0]) if version else "?"
    return found


def _child(args: list[str]) -> dict[str, Any]:
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, *args], check=True, capture_output=True).stdout
    head = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {**json.loads(out), "load_before": load, "load_after": os.getloadavg()[0], "at": head}


# --- the run ----------------------------------------------------------------------------


def run(sizes: list[int], url: str | None, remeasure: bool) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"sizes": {}}
    results["machine"] = _data.machine()
    results["vectors"] = os.environ.get("TROVE_SCALE_VECTORS") or "model"
    queries = _vectors.queries("scifact", "test")
    material = None if remeasure else scale.Material()
    with server(url) as base:
        store = target(base)
        for n in sorted(sizes):
            row = results["sizes"].get(str(n), {}) if remeasure else {}
            if material is not None:
                have = built(store)
                if have > n:
                    print(f"{n:,}: the schema already holds {have:,} documents; skipped")
                    continue
                wrote = grow(store, material, n)
                row = {
                    "chunks": n,
                    "added": wrote["added"],
                    "write_s": wrote["write_s"],
                    "docs_per_s": wrote["added"] / wrote["write_s"] if wrote["write_s"] else 0,
                    "close_s": wrote["close_s"],
                    "build_s": wrote["build_s"],
                    "build_load": os.getloadavg()[0],
                }
            truth = scale.CACHE / f"scale-pg-truth-{n}.npz"
            np.savez(truth, **exact_top(store, queries.vectors))
            row["postgres"] = _child([__file__, "--measure", store, "--truth", str(truth)])
            sqlite = scale.snapshot(n)
            if sqlite.exists():
                sqlite_truth = scale.CACHE / f"scale-truth-{n}.npz"
                if not sqlite_truth.exists():
                    np.savez(sqlite_truth, **scale.exact_top(sqlite, queries.vectors))
                row["sqlite"] = _child(
                    [scale.__file__, "--measure", str(sqlite), "--truth", str(sqlite_truth)]
                )
            results["sizes"][str(n)] = row
            results["date"] = time.strftime("%Y-%m-%d")
            RESULTS.write_text(json.dumps(results, indent=2) + "\n")
            print(json.dumps(row))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"] and sys.argv[3:4] == ["--truth"]:
        print(json.dumps(measure(sys.argv[2], Path(sys.argv[4]))))
    else:
        raise SystemExit("usage: python bench/scale.py --backend postgres ...")
