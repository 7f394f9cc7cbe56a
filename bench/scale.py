"""Latency, recall, ingest rate and file size as a store grows: 10k, 100k, 1M chunks.

    python bench/scale.py                              # 10k, 100k, 1M (the 1M point: ~1 h)
    python bench/scale.py --sizes 10000 100000         # quicker
    python bench/scale.py --report                     # only rewrite docs/benchmarks.md
    python bench/scale.py --backend postgres --sizes 100000   # PostgreSQL (bench/_scale_pg.py)
    python bench/scale.py --sizes 1000000 --cold 4     # cold start, 4 processes' memory
    python bench/scale.py --sizes 100000 300000 --build-only /tmp/s.db   # build time only

One store grows through the sizes (bench/.cache/scale.db): it is built to 10k chunks and
measured, grown to 100k and measured, and so on, so the 1M store also costs the time of
the smaller ones. Each measurement runs in a fresh process, so its peak memory is what a
process that opens the store and searches it needs. A build that was interrupted resumes
where it stopped (documents are keyed by number, so a rewritten batch is a no-op).

The corpus. Embedding 1M chunks with the real model would take days on two cores, so
chunks are made from real material and real vectors:
  - the pool: every chunk of SciFact (8,719, English abstracts) and CMRC 2018 (1,104,
    Chinese Wikipedia) as trove chunks them, with the default model's vectors of them
    (bench/_vectors.py);
  - a synthetic chunk takes a run of 2-5 consecutive sentences of one pool chunk (its
    "primary") and appends a run of 1-3 sentences of a topical neighbour (one of the
    primary's 32 nearest pool chunks by cosine), capped at 1,100 characters: one chunk
    per document; the title is the primary's;
  - its vector mixes the two real vectors by the share of characters each contributed,
    adds Gaussian noise (sigma 0.025 a coordinate: cosine ~0.9 to the mix), and is
    normalized. Mean pooling makes the mix close to what the model gives the text;
    ``--check`` embeds a sample with the real model and prints how close.

Ingest runs on the `chunk.text_hash` index of schema version 3 (this benchmark found that
vector reuse looked hashes up by scanning the chunk table: 10k -> 30k chunks ran at 30-60
documents/s without the index, 833/s with it, so 1M would have taken days).

Queries are the 300 SciFact test claims with their real default-model vectors; query
embedding is a dictionary look-up (the benchmark measures the store, not the model).
Recall@10 of semantic search is against an exact float32 scan of the vectors the store
holds; a hit that scores at least the exact 10th best counts (texts repeat: 7% at 1M, and
a repeated text shares its stored vector, so ties for tenth place occur).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import _data
import _report
import _vectors
import trove
from trove.backends.sqlite.vector_index.codes import decode
from trove.embedders.vectorizer import embedding_text

CACHE = _vectors.CACHE
DB = CACHE / "scale.db"
RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"
BLOCK = 10_000  # documents synthesized (and written) at a time; sizes are multiples
BATCH = 5_000  # documents a transaction
SEED = 20261129
NOISE = 0.025
NEIGHBOURS = 32
MAX_CHARS = 1_100  # under trove's 1,200-character chunk size: one chunk per document
K = 10
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


class Material:
    """The real chunks that synthetic ones are made of, split into sentences."""

    def __init__(self) -> None:
        with _pool_vectors():
            parts = [_vectors.corpus("scifact"), _vectors.corpus("cmrc2018")]
        self.titles = [head for c in parts for head in c.chunk_head]
        self.sentences = [
            [s.lstrip("#").strip() for s in _SENTENCE.split(body) if s.strip()]
            for c in parts
            for body in c.chunk_body
        ]
        self.vectors = np.concatenate([c.vectors for c in parts])
        self.neighbours = _nearest(self.vectors, NEIGHBOURS)

    def block(self, start: int, count: int) -> tuple[list[dict[str, str]], np.ndarray]:
        """Documents [start, start + count) and their vectors; the same on every run."""
        rng = np.random.default_rng([SEED, start])
        primary = rng.integers(0, len(self.vectors), count)
        partner = self.neighbours[primary, rng.integers(0, NEIGHBOURS, count)]
        docs, shares = [], np.empty(count, np.float32)
        for i in range(count):
            own = _run(self.sentences[primary[i]], int(rng.integers(2, 6)), rng)
            other = _run(self.sentences[partner[i]], int(rng.integers(1, 4)), rng)
            glue = "" if _is_cjk(own[0]) else " "
            text = glue.join(own)
            for sentence in other:
                if len(text) + len(sentence) + 1 > MAX_CHARS:
                    break
                text += glue + sentence
            text = text[:MAX_CHARS].strip()
            shares[i] = min(1.0, len(glue.join(own)) / max(1, len(text)))
            docs.append(
                {"title": self.titles[primary[i]], "text": text, "source_id": str(start + i)}
            )
        mixed = (
            shares[:, None] * self.vectors[primary]
            + (1 - shares[:, None]) * (self.vectors[partner])
        )
        mixed += rng.standard_normal(mixed.shape).astype(np.float32) * NOISE
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        return docs, mixed.astype(np.float32)


@contextmanager
def _pool_vectors() -> Iterator[None]:
    """With TROVE_SCALE_VECTORS=random, the pool's vectors are seeded random unit vectors
    instead of the default model's (cached in bench/.cache, or embedded once: ~20 min on
    two busy cores). Query vectors stay the model's. Texts, and so keyword search, are the
    same either way; semantic latency and recall are measured on random vectors."""
    if os.environ.get("TROVE_SCALE_VECTORS") != "random":
        yield
        return
    real = _vectors._cached

    def random(path: Path, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng([SEED, len(texts)])
        found = rng.standard_normal((len(texts), _vectors.DIMENSION)).astype(np.float32)
        return found / np.linalg.norm(found, axis=1, keepdims=True)

    _vectors._cached = random
    try:
        yield
    finally:
        _vectors._cached = real


def _run(sentences: list[str], length: int, rng: np.random.Generator) -> list[str]:
    start = int(rng.integers(0, max(1, len(sentences) - length + 1)))
    return sentences[start : start + length] or [""]


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text[:20])


def _nearest(vectors: np.ndarray, k: int) -> np.ndarray:
    found = np.empty((len(vectors), k), np.int64)
    for start in range(0, len(vectors), 2_000):
        sims = vectors[start : start + 2_000] @ vectors.T
        np.fill_diagonal(sims[:, start : start + 2_000], -2)  # never one's own neighbour
        found[start : start + 2_000] = np.argpartition(-sims, k, axis=1)[:, :k]
    return found


# --- building -------------------------------------------------------------------------


def built(path: Path = DB) -> int:
    """How many documents the store holds (the build resumes from there)."""
    if not path.exists():
        return 0
    with trove.open(path, embedder=None) as kb:
        return kb.stats().documents


def grow(material: Material, target: int, path: Path = DB) -> dict[str, float]:
    """Add documents until the store holds ``target``; returns the time spent writing
    (wall and this process's CPU: the machine is shared) and making the documents."""
    start = built(path) // BLOCK * BLOCK
    embedder = _vectors.CachedEmbedder(strict=True)
    write_s = synth_s = cpu_s = 0.0
    with trove.open(path, embedder=embedder) as kb:
        for at in range(start, target, BLOCK):
            began = time.perf_counter()
            docs, block = material.block(at, min(BLOCK, target - at))
            embedder.table = {
                embedding_text(d["title"], d["text"]): v for d, v in zip(docs, block, strict=True)
            }
            synth_s += time.perf_counter() - began
            began, cpu = time.perf_counter(), time.process_time()
            # Batches of 5,000: one transaction each. Each commit flushes a new FTS5
            # segment (merged later) and rewrites the index pages its random document ids
            # touched; at 100k chunks, batches of 5,000 spent a third of the commit time
            # of batches of 1,000 (bench/bulk.py --base).
            kb.add_many(({"source": "scale", **d} for d in docs), batch_size=BATCH)
            write_s += time.perf_counter() - began
            cpu_s += time.process_time() - cpu
            print(f"  {at + len(docs):,} documents, {write_s:.0f} s writing", file=sys.stderr)
    return {"added": target - start, "write_s": write_s, "synth_s": synth_s, "cpu_s": cpu_s}


def exact_top(path: Path, queries: np.ndarray) -> dict[str, np.ndarray]:
    """Exact float32 top-10 chunk ids per query over the vectors the store holds, and
    each query's 10th best score (recall counts ties: 7% of the synthetic texts repeat,
    and a repeated text shares its stored vector)."""
    best = np.zeros((len(queries), 0), np.int64)
    best_s = np.zeros((len(queries), 0), np.float32)
    with trove.open(path, embedder=None) as kb:
        lock = kb.backend.vector_lock()
        assert lock is not None
        for ids, vectors in kb.backend.iter_vectors(lock.table, batch=100_000):
            scores = np.concatenate([best_s, queries @ vectors.T], axis=1)
            ids = np.concatenate([best, np.broadcast_to(ids, (len(queries), len(ids)))], axis=1)
            top = np.argpartition(-scores, K, axis=1)[:, :K]
            best_s, best = np.take_along_axis(scores, top, 1), np.take_along_axis(ids, top, 1)
    return {"ids": best, "kth": best_s.min(axis=1)}


# --- measuring (in a child process) -----------------------------------------------------


def measure(path: Path, truth_path: Path) -> dict[str, float]:
    queries = _vectors.queries("scifact", "test")
    embedder = _vectors.CachedEmbedder(queries.texts, queries.vectors, strict=True)
    truth = np.load(truth_path)
    result: dict[str, float] = {}
    with trove.open(path, embedder=embedder) as kb:
        began = time.perf_counter()
        kb.warm()  # loads the in-memory vector and word indexes, as a server does
        result["index_load_s"] = time.perf_counter() - began
        words = kb.backend._words._index  # type: ignore[attr-defined]
        result["word_index_mb"] = words.nbytes / 2**20
        found: list[list[str]] = []
        for mode in ("keyword", "semantic", "hybrid"):
            for text in queries.texts[:10]:  # warm the page cache
                kb.search(text, mode=mode)
            latencies = []
            for text in queries.texts:
                began = time.perf_counter()
                hits = kb.search(text, mode=mode, limit=K)
                latencies.append((time.perf_counter() - began) * 1000)
                if mode == "semantic":
                    found.append([h.doc_id for h in hits])
            result[f"{mode}_p50_ms"] = float(np.percentile(latencies, 50))
            result[f"{mode}_p95_ms"] = float(np.percentile(latencies, 95))
        result["recall_at_10"] = _recall(kb, queries.vectors, found, truth["kth"])
        result["documents"] = kb.stats().documents
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def _recall(
    kb: trove.Store, queries: np.ndarray, found: list[list[str]], kth: np.ndarray
) -> float:
    """Share of the exact top 10 found: a hit counts when its stored float32 vector scores
    at least the exact 10th best (so a tie for tenth place is not a miss)."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    shares = []
    for q, docs, floor in zip(queries, found, kth, strict=True):
        marks = ", ".join("?" * len(docs))
        rows = kb.backend.conn.execute(  # type: ignore[attr-defined]
            f"SELECT v.codes FROM chunk c JOIN {lock.table} v ON v.id = c.id "
            f"WHERE c.doc_id IN ({marks})",
            docs,
        )
        stored = decode([r[0] for r in rows]) if rows else np.zeros((0, len(q)), np.float32)
        scores = [float(v @ q) for v in stored]
        shares.append(sum(s >= floor - 1e-6 for s in scores) / K)
    return float(np.mean(shares))


def peak_rss_mb() -> float:
    """This process's peak RSS. Not getrusage: Linux carries ru_maxrss over exec, so a
    child would report its parent's peak (here, the 1.5 GB of vectors it scanned)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def snapshot(n: int) -> Path:
    """The store measured at size n: a copy taken on the way, else the store itself."""
    copy = CACHE / f"scale-{n}.db"
    return copy if copy.exists() else DB


def _truth(n: int, queries: np.ndarray) -> Path:
    path = CACHE / f"scale-truth-{n}.npz"
    np.savez(path, **exact_top(snapshot(n), queries))
    return path


def _measure(path: Path, truth: Path, n: int) -> dict[str, float]:
    child = [sys.executable, __file__, "--measure", str(path), "--truth", str(truth)]
    load = os.getloadavg()[0]
    measured = json.loads(subprocess.run(child, check=True, capture_output=True).stdout)
    if measured["documents"] != n:
        raise SystemExit(f"{path} holds {measured['documents']} documents, not {n}")
    return {**measured, "load_before": load, "load_after": os.getloadavg()[0]}


def file_bytes() -> int:
    return sum(os.path.getsize(p) for p in (DB, Path(f"{DB}-wal")) if p.exists())


# --- cold start and shared memory (fresh processes) -------------------------------------

BENCH = Path(__file__).resolve().parent
# A fresh process answering one query: query embedding is a look-up (no model), as in the
# warm figures, so the time is the store's (the hash embedder's is as small).
_COLD = """
import sys
sys.path.insert(0, sys.argv[1])
import _vectors, trove
q, i = _vectors.queries("scifact", "test"), int(sys.argv[3])
embedder = _vectors.CachedEmbedder(q.texts[i : i + 1], q.vectors[i : i + 1], strict=True)
with trove.open(sys.argv[2], embedder=embedder) as kb:
    assert kb.search(q.texts[i], mode=sys.argv[4], limit=10)
"""
# A serving process: opens the store, warms it, answers 60 queries in each mode, then
# waits (its memory is read meanwhile).
_SERVE = """
import sys
sys.path.insert(0, sys.argv[1])
import _vectors, trove
q = _vectors.queries("scifact", "test")
with trove.open(sys.argv[2], embedder=_vectors.CachedEmbedder(q.texts, q.vectors)) as kb:
    kb.warm()
    for mode in ("keyword", "semantic", "hybrid"):
        for text in q.texts[:60]:
            kb.search(text, mode=mode, limit=10)
    print("ready", flush=True)
    sys.stdin.readline()
"""


def cold(path: Path, repeat: int) -> dict[str, float]:
    """Median wall seconds of a fresh process answering one keyword or hybrid query, and
    of ``trove stats``, on the store as a server left it (its index cache in place)."""
    row: dict[str, float] = {"cold_load_before": os.getloadavg()[0]}
    for mode in ("keyword", "hybrid"):
        times = []
        for r in range(repeat):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", _COLD, str(BENCH), str(path), str(r), mode])
            times.append(time.perf_counter() - began)
        row[f"cold_{mode}_s"] = float(np.median(times))
    stats = [str(Path(sys.executable).parent / "trove"), "--db", str(path), "stats"]
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(stats, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - began)
    row["cold_stats_s"] = float(np.median(times))
    row["cold_load_after"] = os.getloadavg()[0]
    return row


def shared(path: Path, processes: int) -> dict[str, float]:
    """Total PSS and RSS (MB) of ``processes`` warm processes serving the store at once."""
    children = []
    for _ in range(processes):
        child = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(BENCH), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise SystemExit("a serving process failed")
        children.append(child)
    pss = rss = private = 0.0
    peak: list[float] = []
    for child in children:
        for line in Path(f"/proc/{child.pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1]) / 1024
            elif line.startswith("Rss:"):
                rss += int(line.split()[1]) / 1024
            elif line.startswith(("Private_Clean:", "Private_Dirty:")):
                private += int(line.split()[1]) / 1024
        for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak.append(int(line.split()[1]) / 1024)
    for child in children:
        child.communicate("\n")
    return {
        "serving_processes": processes,
        "pss_total_mb": pss,
        "rss_total_mb": rss,
        "private_total_mb": private,  # the rest of the RSS is mapped pages they share
        "serving_peak_rss_mb": max(peak),
        "pss_load": os.getloadavg()[0],
    }


# --- the realism check ------------------------------------------------------------------


def check(material: Material, samples: int) -> None:
    """Cosine between synthetic vectors and the real model's vectors of the same texts."""
    from trove.embedders import get_embedder

    docs, mixed = material.block(10**9, samples)  # a block never indexed
    texts = [embedding_text(d["title"], d["text"]) for d in docs]
    real = get_embedder("default").embed(texts)
    own = np.sum(real * mixed, axis=1)
    print(
        f"cosine(synthetic vector, model vector of the same text) over {samples} chunks: "
        f"mean {own.mean():.3f}, min {own.min():.3f}; between different chunks: "
        f"{float(np.mean(real @ mixed.T)):.3f} (model), {float(np.mean(mixed @ mixed.T)):.3f} "
        "(synthetic)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--report", action="store_true", help="only rewrite the docs")
    parser.add_argument("--check", type=int, metavar="N", help="realism check on N chunks")
    parser.add_argument("--fresh", action="store_true", help="delete the store first")
    parser.add_argument(
        "--remeasure", action="store_true", help="measure the built sizes again (busy machine)"
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--url", help="postgres: a server to use (default: one in bench/.cache)")
    parser.add_argument(
        "--cold",
        type=int,
        metavar="N",
        help="at the built sizes: cold-start times and the total PSS of N serving processes",
    )
    parser.add_argument(
        "--build-only",
        type=Path,
        metavar="STORE",
        help="only grow STORE (a new path) through the sizes and time it; nothing recorded",
    )
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--truth", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.truth)))
        return
    if args.report:
        _report.write()
        return
    if args.backend == "postgres":
        import _scale_pg  # it builds on this module
        import _scale_pg_report

        _scale_pg.run(args.sizes, args.url, args.remeasure)
        _scale_pg_report.write_section(json.loads(_scale_pg.RESULTS.read_text()))
        return
    material = Material()
    if args.check:
        check(material, args.check)
        return
    if args.build_only:
        for n in sorted(args.sizes):
            wrote = grow(material, n, args.build_only)
            rate = wrote["added"] / wrote["write_s"] if wrote["write_s"] else 0.0
            cpu = wrote["added"] / wrote["cpu_s"] if wrote["cpu_s"] else 0.0
            load = os.getloadavg()[0]
            print(
                json.dumps(
                    {"chunks": n, **wrote, "docs_per_s": rate, "docs_per_cpu_s": cpu, "load": load}
                )
            )
        return
    if args.fresh:
        for stale in CACHE.glob("scale*"):  # the stores, their index caches, the truths
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink()
    sizes = sorted(args.sizes)
    if any(n % BLOCK for n in sizes):
        raise SystemExit(f"sizes must be multiples of {BLOCK}")
    results = _load_results()
    results["machine"] = _data.machine()
    print(f"machine: {results['machine']}")
    queries = _vectors.queries("scifact", "test")
    for n in sizes:
        if args.cold:
            row = results["sizes"][str(n)]
            row.update({**cold(snapshot(n), 5), **shared(snapshot(n), args.cold)})
        elif args.remeasure:
            row = results["sizes"][str(n)]
            row.update(_measure(snapshot(n), _truth(n, queries.vectors), n))
        else:
            have = built()
            if have > n:
                print(f"{n:,}: the store already holds {have:,} documents; skipped (--fresh)")
                continue
            began = time.perf_counter()
            wrote = grow(material, n)
            if n < max(sizes):  # a copy to measure (again) while the store grows on
                shutil.copyfile(DB, CACHE / f"scale-{n}.db")
            truth = _truth(n, queries.vectors)
            previous = results["sizes"].get(str(n - wrote["added"]), {})
            row = {
                "chunks": n,
                "added": wrote["added"],
                "write_s": wrote["write_s"],
                "docs_per_s": wrote["added"] / wrote["write_s"] if wrote["write_s"] else 0.0,
                "build_s": previous.get("build_s", 0.0) + wrote["write_s"],
                "write_cpu_s": wrote["cpu_s"],
                "synth_s": wrote["synth_s"],
                "build_load": os.getloadavg()[0],
                "file_mb": file_bytes() / 2**20,
                **_measure(snapshot(n), truth, n),
            }
            row["step_s"] = time.perf_counter() - began
        results["sizes"][str(n)] = row
        results["date"] = time.strftime("%Y-%m-%d")
        _save_results(results)
        print(json.dumps(row))
    _report.write()


def _load_results() -> dict:
    if RESULTS.exists():
        return json.loads(RESULTS.read_text())
    return {"sizes": {}}


def _save_results(results: dict) -> None:
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
