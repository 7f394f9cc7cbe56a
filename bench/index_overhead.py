"""What storage and indexing add to embedding, on the same SciFact texts.

    python bench/index_overhead.py [--docs 1000] [--repeats 3]

Times (a) the default embedder alone on every chunk text, in the batches add_many uses,
and (b) add_many of the same documents into a fresh store whose embedder hands back those
precomputed vectors, so (b) is everything trove does besides embedding: chunking,
hashing, the document and chunk rows, both FTS5 indexes, the vec0 table, and the
transaction. Runs alternate, so a busy machine slows both alike; medians are reported.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import _data
import trove
from trove import write as writer
from trove.embedders import Embedder, get_embedder
from trove.embedders.vectorizer import embedding_text


class Precomputed(Embedder):
    """The default model's vectors, looked up by text: embedding costs nothing."""

    def __init__(self, model: Embedder, vectors: dict[str, np.ndarray]) -> None:
        self.model_id, self.dimension, self.languages = model.model_id, model.dimension, None
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 384))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    docs = _data.documents("scifact")[: args.docs]
    texts = [
        embedding_text(row.head, row.text)
        for d in docs
        for row in writer.chunk_rows(writer.prepare(d), 1200, 150)
    ]
    model = get_embedder("default")
    model.embed(["warm up"])
    embed_s, store_s = [], []
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        started = time.perf_counter()
        for start in range(0, len(texts), 256):
            batch = texts[start : start + 256]
            vectors.update(zip(batch, model.embed(batch), strict=True))
        embed_s.append(time.perf_counter() - started)
        embedder = Precomputed(model, vectors)
        with (
            tempfile.TemporaryDirectory() as tmp,
            trove.open(Path(tmp) / "k.db", embedder=embedder) as kb,
        ):
            started = time.perf_counter()
            kb.add_many(docs)
            store_s.append(time.perf_counter() - started)
    embed, store = statistics.median(embed_s), statistics.median(store_s)
    print(f"machine: {_data.machine()}")
    print(
        f"{len(docs)} docs, {len(texts)} chunks: embedder alone {embed:.1f} s "
        f"({len(docs) / embed:.1f} docs/s); storage + indexing {store:.2f} s "
        f"= {store / embed * 100:.1f}% of the embedding time (medians of {args.repeats})"
    )


if __name__ == "__main__":
    main()
