"""trove against the stores people would use instead, on one machine, with one embedder.

    pip install -e '.[eval,bench]'
    python bench/peers.py                                   # SciFact test + CMRC 2018 dev
    python bench/peers.py --datasets scifact --systems trove,chroma

Systems: trove (keyword, semantic, hybrid), Chroma (embedded PersistentClient, HNSW),
LanceDB (embedded; vector, its native full-text search and its hybrid search with RRF),
sqlite-vec used directly (a vec0 table, brute-force k-NN in SQL) and bm25s.

Same data: each document is cut into chunks by trove's chunker (1,200 characters, 150
overlap); every vector system indexes those chunks with trove's default-model vectors
(bench/_vectors.py, computed once and cached), and a document's score is its best
chunk's. bm25s and the full-text indexes see the same chunk text (bm25s: whole
documents, the way its BEIR examples index). Query vectors are precomputed too: every
latency excludes query embedding, which costs each system the same.

Per system and data set, in its own process: indexing time, on-disk size right after
indexing and at rest (the system closed: what a user's disk keeps), peak memory (the
process's high-water mark, and what it added to the data already loaded), query latency
p50/p95 for the top 10 documents, warm (each system's own warm-up, trove's
``Store.warm()``, then 100 queries; the first 1,000 timed), with the load average when
each system started, and nDCG@10 / recall@100 over all judged queries (ir-measures),
ranked to depth 100.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import _data
import _report
import _vectors
from trove.tools.evaluate import measure

RESULTS = Path(__file__).resolve().parent / "results" / "peers.json"
SPLITS = {"scifact": "test", "cmrc2018": "dev"}
SYSTEMS = ("trove", "chroma", "lancedb", "sqlite-vec", "bm25s")
DEPTH = 100  # documents ranked for the quality figures
LIMIT = 10  # documents asked for in the timed queries
TIMED = 1_000  # queries timed (CMRC dev has 3,219; every one is still ranked for quality)
CHUNKS_PER_DOC = 5  # vector peers fetch this many chunks per document wanted, then collapse
WARM_QUERIES = 100  # asked of every searcher, untimed, after the system's own warm-up

# A searcher takes (query index, documents wanted) and returns BEIR ids, best first.
Searcher = Callable[[int, int], list[str]]


def _nothing() -> None:
    return None


@dataclass
class System:
    """One indexed system: its searchers by label, how it loads what it builds lazily
    (before anything is timed), and how it is closed (before its disk at rest is read)."""

    searchers: dict[str, Searcher]
    warm: Callable[[], None] = _nothing
    close: Callable[[], None] = _nothing


class Data:
    """One data set: chunks with vectors, judged queries with vectors, judgments."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.corpus = _vectors.corpus(name)
        self.queries = _vectors.queries(name, SPLITS[name])
        self.qrels = _data.qrels(name, SPLITS[name])
        self.cjk = name == "cmrc2018"


def collapse(chunk_docs: Iterator[str], limit: int) -> list[str]:
    """Document ids in order of their best chunk."""
    return list(dict.fromkeys(chunk_docs))[:limit]


# --- the systems: each returns {mode: searcher} after indexing into `folder` --------------


def run_trove(data: Data, folder: Path) -> System:
    # trove's own bulk path: add_many, one transaction per batch (README, "Use it from
    # Python"); the cached embedder hands over the default model's vectors.
    import trove

    c, q = data.corpus, data.queries
    embedder = _vectors.CachedEmbedder(
        c.chunk_text + q.texts, np.concatenate([c.vectors, q.vectors]), strict=True
    )
    kb = trove.open(folder / "kb.db", embedder=embedder)
    kb.add_many(
        {"text": d["text"], "title": d.get("title", ""), "source_id": d["_id"]} for d in c.docs
    )

    def mode(name: str) -> Searcher:
        return lambda i, k: [str(h.source_id) for h in kb.search(q.texts[i], mode=name, limit=k)]

    # warm(): the vector index and the word postings loaded (in the background otherwise,
    # FTS5 answering meanwhile); close(): the log folded in, the index caches saved.
    searchers = {f"trove {m}": mode(m) for m in ("keyword", "semantic", "hybrid")}
    return System(searchers, warm=kb.warm, close=kb.close)


def run_chroma(data: Data, folder: Path) -> System:
    # Chroma's embedded, persistent mode (docs: "Running Chroma in client mode" ->
    # PersistentClient), our own embeddings passed in (embedding_function=None), cosine
    # space as for sentence-transformers models, default HNSW settings.
    import chromadb

    client = chromadb.PersistentClient(path=str(folder / "chroma"))
    collection = client.create_collection(
        "chunks", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    c, q = data.corpus, data.queries
    step = client.get_max_batch_size()
    for start in range(0, len(c.chunk_text), step):
        end = min(start + step, len(c.chunk_text))
        collection.add(
            ids=[str(i) for i in range(start, end)],
            embeddings=c.vectors[start:end],
            documents=c.chunk_text[start:end],
            metadatas=[{"doc": d} for d in c.chunk_doc[start:end]],
        )

    def search(i: int, k: int) -> list[str]:
        found = collection.query(
            query_embeddings=q.vectors[i : i + 1],
            n_results=k * CHUNKS_PER_DOC,
            include=["metadatas"],
        )
        return collapse((str(m["doc"]) for m in (found["metadatas"] or [[]])[0]), k)

    return System({"chroma vector (HNSW)": search}, close=client.close)


def run_lancedb(data: Data, folder: Path) -> System:
    # LanceDB embedded (lancedb.connect(path)), a table of chunks with our vectors. Vector
    # search without an ANN index is exact (flat), which its docs advise for tables this
    # small (an IVF-PQ index pays off from ~100k rows). Full-text: its native FTS index
    # (create_fts_index; English stemming, stop words; for Chinese the n-gram tokenizer,
    # the option that needs no downloaded language model). Hybrid: its documented
    # query_type="hybrid" with RRFReranker.
    import lancedb
    import pyarrow as pa
    from lancedb.rerankers import RRFReranker

    c, q = data.corpus, data.queries
    table = lancedb.connect(str(folder / "lance")).create_table(
        "chunks",
        pa.table(
            {
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(c.vectors.reshape(-1), pa.float32()), c.vectors.shape[1]
                ),
                "text": c.chunk_text,
                "doc": c.chunk_doc,
            }
        ),
    )
    if data.cjk:
        table.create_fts_index("text", base_tokenizer="ngram")
    else:
        table.create_fts_index("text")
    reranker = RRFReranker()

    def vector(i: int, k: int) -> list[str]:
        rows = (
            table.search(q.vectors[i], query_type="vector")
            .distance_type("cosine")
            .select(["doc"])
            .limit(k * CHUNKS_PER_DOC)
            .to_list()
        )
        return collapse((r["doc"] for r in rows), k)

    def fts(i: int, k: int) -> list[str]:
        rows = table.search(q.texts[i], query_type="fts").select(["doc"]).limit(k * CHUNKS_PER_DOC)
        return collapse((r["doc"] for r in rows.to_list()), k)

    def hybrid(i: int, k: int) -> list[str]:
        rows = (
            table.search(query_type="hybrid")
            .vector(q.vectors[i])
            .text(q.texts[i])
            .distance_type("cosine")
            .rerank(reranker)
            .select(["doc"])
            .limit(k * CHUNKS_PER_DOC)
            .to_list()
        )
        return collapse((r["doc"] for r in rows), k)

    searchers = {
        "lancedb vector (flat)": vector,
        "lancedb fts": fts,
        "lancedb hybrid (RRF)": hybrid,
    }
    return System(searchers)  # its files are written whole as it goes: nothing to close


def run_sqlite_vec(data: Data, folder: Path) -> System:
    # sqlite-vec's documented k-NN: a vec0 virtual table (cosine), bulk insert in one
    # transaction, `WHERE embedding MATCH ? AND k = ?`. apsw, as the stdlib sqlite3 often
    # cannot load extensions.
    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(folder / "vec.db"))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    c, q = data.corpus, data.queries
    conn.execute(
        "CREATE VIRTUAL TABLE chunks USING vec0("
        f"embedding float[{c.vectors.shape[1]}] distance_metric=cosine, doc text)"
    )
    with conn:
        conn.executemany(
            "INSERT INTO chunks (rowid, embedding, doc) VALUES (?, ?, ?)",
            ((i + 1, c.vectors[i].tobytes(), c.chunk_doc[i]) for i in range(len(c.vectors))),
        )

    def search(i: int, k: int) -> list[str]:
        rows = conn.execute(
            "SELECT doc FROM chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (q.vectors[i].tobytes(), k * CHUNKS_PER_DOC),
        )
        return collapse((str(r[0]) for r in rows), k)

    return System({"sqlite-vec (vec0, exact)": search}, close=conn.close)


def run_bm25s(data: Data, folder: Path) -> System:
    # bm25s as its README shows: bm25s.tokenize with English stop words and a PyStemmer
    # stemmer, BM25().index, retrieve, save. Chinese has no spaces: jieba splits words.
    import bm25s

    c, q = data.corpus, data.queries
    texts = [f"{d.get('title', '')} {d['text']}" for d in c.docs]
    if data.cjk:
        import jieba

        jieba.setLogLevel(60)
        tokenize: Callable[[list[str]], Any] = lambda xs: [  # noqa: E731
            [w for w in jieba.lcut(x.lower()) if w.strip()] for x in xs
        ]
    else:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        tokenize = lambda xs: bm25s.tokenize(  # noqa: E731
            xs, stopwords="en", stemmer=stemmer, show_progress=False
        )
    retriever = bm25s.BM25()
    retriever.index(tokenize(texts), show_progress=False)
    retriever.save(str(folder / "bm25s"))
    ids = np.array([d["_id"] for d in c.docs])
    queries = tokenize(q.texts) if data.cjk else None

    def search(i: int, k: int) -> list[str]:
        tokens = [queries[i]] if queries is not None else tokenize([q.texts[i]])
        found, _ = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False, n_threads=1)
        return [str(ids[j]) for j in found[0]]

    return System({"bm25s": search})  # saved above: nothing to close


RUNNERS: dict[str, Callable[[Data, Path], System]] = {
    "trove": run_trove,
    "chroma": run_chroma,
    "lancedb": run_lancedb,
    "sqlite-vec": run_sqlite_vec,
    "bm25s": run_bm25s,
}


# --- one system on one data set, in its own process --------------------------------------


def one(system: str, name: str) -> list[dict[str, Any]]:
    data = Data(name)
    base_mb = _status_mb("VmRSS")
    folder = Path(tempfile.mkdtemp(prefix=f"peers-{system}-", dir=_vectors.CACHE))
    try:
        began = time.perf_counter()
        indexed = RUNNERS[system](data, folder)
        index_s = time.perf_counter() - began
        disk_mb = _folder_mb(folder)
        began = time.perf_counter()
        indexed.warm()
        warm_s = time.perf_counter() - began
        rows = []
        for label, search in indexed.searchers.items():
            rows.append({"system": label, **_measure(data, search)})
        peak = _status_mb("VmHWM")  # not ru_maxrss: Linux keeps the parent's over exec
        indexed.close()
        rest_mb = _folder_mb(folder)
        for row in rows:
            row.update(
                index_s=index_s,
                warm_s=warm_s,
                disk_mb=disk_mb,
                disk_rest_mb=rest_mb,
                peak_rss_mb=peak,
                added_mb=peak - base_mb,
            )
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _measure(data: Data, search: Searcher) -> dict[str, float]:
    n = len(data.queries.ids)
    for i in range(min(WARM_QUERIES, n)):  # caches and lazily built structures
        search(i, LIMIT)
    latencies = []
    for i in range(min(n, TIMED)):
        began = time.perf_counter()
        search(i, LIMIT)
        latencies.append((time.perf_counter() - began) * 1000)
    run = {
        qid: {doc: float(DEPTH - r) for r, doc in enumerate(search(i, DEPTH))}
        for i, qid in enumerate(data.queries.ids)
    }
    per_query = measure(run, data.qrels)
    return {
        "ndcg@10": float(np.mean([m["ndcg@10"] for m in per_query.values()])),
        "recall@100": float(np.mean([m["recall@100"] for m in per_query.values()])),
        "p50_ms": float(np.percentile(latencies, 50)),
        "p95_ms": float(np.percentile(latencies, 95)),
    }


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _version(system: str) -> str:
    package = {"chroma": "chromadb"}.get(system, system)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="scifact,cmrc2018")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--report", action="store_true", help="only rewrite the docs")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # SYSTEM DATASET (child)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    if args.report:
        _report.write()
        return
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"datasets": {}}
    results.update(machine=_data.machine(), date=time.strftime("%Y-%m-%d"))
    results["versions"] = {s: _version(s) for s in SYSTEMS}
    print(f"machine: {results['machine']}")
    for name in args.datasets.split(","):
        _vectors.corpus(name), _vectors.queries(name, SPLITS[name])  # cache before timing
        rows = results["datasets"].setdefault(name, {})
        for system in args.systems.split(","):
            load = os.getloadavg()[0]
            child = [sys.executable, __file__, "--one", system, name]
            done = subprocess.run(child, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{name} {system}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
                continue
            for row in json.loads(done.stdout.splitlines()[-1]):
                row["load"] = load
                rows[row["system"]] = row
                print(
                    f"{name:<9} {row['system']:<24} nDCG@10 {row['ndcg@10']:.3f}  "
                    f"R@100 {row['recall@100']:.3f}  p50 {row['p50_ms']:.1f} ms  "
                    f"p95 {row['p95_ms']:.1f} ms  index {row['index_s']:.1f} s  "
                    f"disk {row['disk_mb']:.1f} MB, at rest {row['disk_rest_mb']:.1f} MB  "
                    f"peak {row['peak_rss_mb']:.0f} MB  load {load:.1f}"
                )
            RESULTS.parent.mkdir(exist_ok=True)
            RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    _report.write()


if __name__ == "__main__":
    main()
