"""trove's disk at rest on SciFact, by part: bytes per chunk (issue 33).

    PYTHONPATH=src .venv/bin/python bench/disk_parts.py [--dataset scifact] [--data FOLDER]

Writes the corpus as bench/peers.py does (``add_many`` of title, text and source id,
trove's default chunking) with 384-d vectors, then ``Store.warm()``, one search of each
mode and ``close()``: what a user's disk keeps. The vectors are random unit vectors
(seeded): every size here is the same for any vectors of this dimension, and none need
the model (~30 min for SciFact on this machine). Sizes are SQLite's ``dbstat`` pages
(not payload) and the files of ``kb.db.trove-index/``.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections import Counter
from pathlib import Path

import apsw
import numpy as np

import _data
import _vectors
import trove
from trove import write as writer
from trove.embedders.vectorizer import embedding_text

# dbstat names to parts, first match wins.
PARTS = [
    (r"^chunk_vec_\d+_ids$", "vectors: the ids' index"),
    (r"^chunk_vec_\d+", "vectors: int16 codes (schema 15; float32 vec0 before)"),
    (r"^document$", "document rows"),
    (r"^(sqlite_autoindex_document|document_)", "document indexes"),
    (r"^chunk$", "chunk rows"),
    (r"^(sqlite_autoindex_chunk|chunk_hash)", "chunk indexes"),
    (r"^chunk_(fts|cjk)", "FTS5: words and CJK bigrams"),
]


def part_of(name: str) -> str:
    return next((part for pattern, part in PARTS if re.match(pattern, name)), "the rest")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--data", type=Path, default=_data.DATA, help="the data sets' folder")
    args = parser.parse_args()
    _data.DATA = args.data
    docs = list(_data.corpus(args.dataset))
    texts = []
    for d in docs:
        doc = writer.prepare({"text": d["text"], "title": d.get("title", "")})
        texts += [embedding_text(r.head, r.text) for r in writer.chunk_rows(doc, 1200, 150)]
    rng = np.random.default_rng(33)
    vectors = rng.standard_normal((len(texts) + 1, _vectors.DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    embedder = _vectors.CachedEmbedder([*texts, "a query"], vectors, strict=True)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kb.db"
        kb = trove.open(path, embedder=embedder)
        kb.add_many(
            {"text": d["text"], "title": d.get("title", ""), "source_id": d["_id"]} for d in docs
        )
        after = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
        kb.warm()
        for mode in ("keyword", "semantic", "hybrid"):
            kb.search("a query", mode=mode)
        chunks = kb.stats().chunks
        kb.close()
        sizes: Counter[str] = Counter()
        conn = apsw.Connection(str(path))
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            sizes[part_of(str(name))] += int(size)
        [(free,)] = conn.execute(
            "SELECT freelist_count * page_size FROM pragma_freelist_count, pragma_page_size"
        )
        sizes["free pages"] += int(free)
        conn.close()
        for p in (Path(folder) / "kb.db.trove-index").rglob("*"):
            if p.is_file():
                sizes[f"cache: {p.name}"] += p.stat().st_size
        rest = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
    print(f"{args.dataset}: {len(docs)} documents, {chunks} chunks")
    print("| part | bytes per chunk | MiB |\n|---|---|---|")
    for part, size in sizes.most_common():
        print(f"| {part} | {size / chunks:,.0f} | {size / 2**20:.1f} |")
    print(f"| **at rest, total** | **{rest / chunks:,.0f}** | **{rest / 2**20:.1f}** |")
    print(f"right after add_many: {after / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
