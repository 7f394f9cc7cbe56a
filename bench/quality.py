"""Retrieval quality and speed per mode (keyword, semantic, hybrid), through the public API.

    python bench/quality.py                      # SciFact test + CMRC 2018 dev, default embedder
    python bench/quality.py --embedder multilingual --datasets cmrc2018
    python bench/quality.py --embedder multilingual --datasets scifact --max-docs 1500
    python bench/quality.py --vectors --cache /tmp/old-stores   # the cached vectors

Prints nDCG@10, recall@100 and MRR@10 per mode, indexing time against the embedder alone
on the same chunk texts, and query latency p50/p95 at limit 10 (hybrid includes
embedding the query). Stores are kept in bench/.cache so a second run skips indexing
(pass --fresh to rebuild and re-measure indexing). ``--max-docs N`` keeps a smaller corpus
(every document judged in any split, then the others in corpus order up to N), for a model
too slow to embed the whole of it on this machine (SciFact with ``multilingual``); its
store is bench/.cache/DATASET-N-EMBEDDER.db and its figures are not comparable with the
full corpus's.

``--vectors`` builds and searches the default-model stores with the vectors cached by
bench/_vectors.py (the chunks' and the queries', as bench/peers.py does): no model runs,
so indexing time is not measured, and two checkouts (``OTHER/bin/python
bench/quality.py --vectors --cache DIR``, each with its own store folder when their schemas
differ) are compared on the same vectors.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import _data
import trove
from trove import write as writer
from trove.embedders import Embedder
from trove.embedders.vectorizer import embedding_text

CACHE = Path(__file__).resolve().parent / ".cache"
# The splits reported; the fusion was chosen on the others (bench/fusion_grid.py).
SPLITS = {"scifact": "test", "cmrc2018": "dev"}
MODES = ("keyword", "semantic", "hybrid")


def build(
    name: str, embedder: str, fresh: bool, max_docs: int = 0
) -> tuple[Path, dict[str, float]]:
    """A store of the data set; on a fresh build, indexing time vs the embedder alone."""
    path = CACHE / f"{store_name(name, max_docs)}-{embedder.replace(':', '_')}.db"
    if path.exists() and not fresh:
        return path, {}
    CACHE.mkdir(exist_ok=True)
    for stale in CACHE.glob(path.name + "*"):
        stale.unlink()
    docs = corpus(name, max_docs)
    with trove.open(path, embedder=embedder) as kb:
        model = kb.embedder
        assert model is not None
        model.embed(["warm up"])
        started = time.perf_counter()
        kb.add_many(docs)
        index_s = time.perf_counter() - started
        texts = [
            embedding_text(row.head, row.text)
            for d in docs
            for row in writer.chunk_rows(writer.prepare(d), kb.chunk_chars, kb.chunk_overlap)
        ]
    started = time.perf_counter()
    for start in range(0, len(texts), 256):  # the same batches add_many embeds
        model.embed(texts[start : start + 256])
    embed_s = time.perf_counter() - started
    return path, {
        "docs": len(docs),
        "chunks": len(texts),
        "index_s": index_s,
        "embed_only_s": embed_s,
        "overhead": index_s / embed_s - 1,
        "docs_per_s": len(docs) / index_s,
    }


def build_cached(name: str, cache: Path) -> tuple[Path, Embedder]:
    """A default-model store of the data set built from bench/_vectors.py's vectors, and
    the embedder that looks them up (the reported split's queries included)."""
    import _vectors

    chunks, queries = _vectors.corpus(name), _vectors.queries(name, SPLITS[name])
    embedder = _vectors.CachedEmbedder(
        chunks.chunk_text + queries.texts, np.concatenate([chunks.vectors, queries.vectors])
    )
    path = cache / f"{name}-default.db"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with trove.open(path, embedder=embedder) as kb:
            kb.add_many(corpus(name))
        if embedder.misses:  # chunked otherwise than bench/_vectors.py: the model ran
            print(f"{name}: {embedder.misses} chunks were not in the vector cache")
    return path, embedder


def store_name(name: str, max_docs: int = 0) -> str:
    """The cached store's name for a data set (``scifact-1500`` for a smaller corpus)."""
    return f"{name}-{max_docs}" if max_docs else name


def corpus(name: str, max_docs: int = 0) -> list[dict[str, str]]:
    """The data set's documents; with ``max_docs``, every judged one, then others up to it."""
    docs = _data.documents(name)
    if not max_docs:
        return docs
    splits = sorted(p.stem for p in (_data.DATA / name / "qrels").glob("*.tsv"))
    judged = {sid for split in splits for rel in _data.qrels(name, split).values() for sid in rel}
    kept = [d for d in docs if d["source_id"] in judged]
    others = [d for d in docs if d["source_id"] not in judged]
    return kept + others[: max(0, max_docs - len(kept))]


def evaluate(
    path: Path, name: str, split: str, max_queries: int = 0, **options: object
) -> dict[str, dict[str, float]]:
    queries = _data.queries(name, split)
    if max_queries:  # a quick look: the first N judged queries
        queries = dict(list(queries.items())[:max_queries])
    judged = _data.qrels(name, split)
    results = {}
    with trove.open(path, **options) as kb:  # type: ignore[arg-type]
        for mode in MODES:
            run: dict[str, dict[str, float]] = {}
            latencies = []
            for qid, text in queries.items():
                hits = kb.search(text, mode=mode, limit=100)
                run[qid] = {str(h.source_id): h.score for h in hits}
            for text in list(queries.values())[:300]:
                started = time.perf_counter()
                kb.search(text, mode=mode, limit=10)
                latencies.append((time.perf_counter() - started) * 1000)
            results[mode] = {
                **_data.evaluate(run, judged),
                "p50_ms": _data.median(latencies),
                "p95_ms": _data.percentile(latencies, 0.95),
            }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--datasets", default="scifact,cmrc2018")
    parser.add_argument("--fresh", action="store_true", help="rebuild the cached stores")
    parser.add_argument("--max-queries", type=int, default=0, help="only the first N queries")
    parser.add_argument("--max-docs", type=int, default=0, help="a smaller corpus (see above)")
    parser.add_argument("--vectors", action="store_true", help="the cached vectors (see above)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the --vectors stores are")
    args = parser.parse_args()
    print(f"machine: {_data.machine()}  embedder: {args.embedder}  trove: {trove.__file__}")
    for name in args.datasets.split(","):
        options: dict[str, object] = {}
        if args.vectors:
            path, options["embedder"] = build_cached(name, args.cache)
            indexing: dict[str, float] = {}
        else:
            path, indexing = build(name, args.embedder, args.fresh, args.max_docs)
        if indexing:
            print(
                f"{name}: indexed {indexing['docs']:.0f} docs / {indexing['chunks']:.0f} chunks "
                f"in {indexing['index_s']:.1f} s ({indexing['docs_per_s']:.1f} docs/s); "
                f"the embedder alone {indexing['embed_only_s']:.1f} s; "
                f"storage + indexing overhead {indexing['overhead'] * 100:+.1f}%"
            )
        for mode, figures in evaluate(
            path, name, SPLITS[name], args.max_queries, **options
        ).items():
            print(
                f"{name} {SPLITS[name]} {mode:<8} nDCG@10 {figures['nDCG@10']:.4f}  "
                f"R@100 {figures['R@100']:.3f}  MRR@10 {figures['RR@10']:.3f}  "
                f"p50 {figures['p50_ms']:.1f} ms  p95 {figures['p95_ms']:.1f} ms"
            )


if __name__ == "__main__":
    main()
