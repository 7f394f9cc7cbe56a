"""trove's default-model vectors for the benchmark data, computed once, cached in bench/.cache.

Every system in bench/peers.py and bench/scale.py gets the same vectors: the chunks trove
itself would make of each document (trove's chunker, default sizes) and each query, all
embedded by trove's default embedder (all-MiniLM-L6-v2, int8 ONNX). Peers never load a
model of their own (none may be downloaded here), and every latency figure excludes
query embedding, which costs every system the same.

Embedding SciFact takes ~30 min on two busy cores, so vectors already stored in a trove
store under bench/.cache (bench/quality.py keeps one per data set) are reused by text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import _data
from trove import write as writer
from trove.backends.sqlite.vector_index.codes import decode
from trove.embedders import Embedder, get_embedder
from trove.embedders.vectorizer import embedding_text

CACHE = Path(__file__).resolve().parent / ".cache"
MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSION = 384


@dataclass
class Corpus:
    """One data set as chunks (trove's chunking) with their vectors, and its documents."""

    docs: list[dict[str, str]]  # BEIR rows: _id, title, text
    chunk_doc: list[str]  # the BEIR id of each chunk's document
    chunk_text: list[str]  # what the embedder saw: title/headings, blank line, chunk text
    chunk_head: list[str]  # title and headings of each chunk
    chunk_body: list[str]  # each chunk's own text
    vectors: np.ndarray  # (chunks, 384) float32, unit rows


@dataclass
class Queries:
    ids: list[str]
    texts: list[str]
    vectors: np.ndarray  # (queries, 384) float32


def corpus(name: str) -> Corpus:
    docs = list(_data.corpus(name))
    chunk_doc, chunk_text, chunk_head, chunk_body = [], [], [], []
    for d in docs:
        doc = writer.prepare({"text": d["text"], "title": d.get("title", "")})
        for row in writer.chunk_rows(doc, 1200, 150):
            chunk_doc.append(d["_id"])
            chunk_text.append(embedding_text(row.head, row.text))
            chunk_head.append(row.head)
            chunk_body.append(row.text)
    vectors = _cached(CACHE / f"vectors-{name}-corpus.npy", chunk_text)
    return Corpus(docs, chunk_doc, chunk_text, chunk_head, chunk_body, vectors)


def queries(name: str, split: str) -> Queries:
    found = _data.queries(name, split)
    ids, texts = list(found), list(found.values())
    return Queries(ids, texts, _cached(CACHE / f"vectors-{name}-{split}-queries.npy", texts))


class CachedEmbedder(Embedder):
    """The default embedder's vectors looked up by text; unknown texts go to the real model.

    Bulk loads and benchmarks pass it to ``trove.open(embedder=...)`` so that indexing and
    query latency measure the store, not the model. It records the default model's id, so
    the store is an ordinary default-model store afterwards.
    """

    model_id = MODEL_ID
    dimension = DIMENSION
    languages = frozenset({"latin"})  # as the default embedder: hybrid skips it for CJK

    def __init__(
        self, texts: Sequence[str] = (), vectors: np.ndarray | None = None, strict: bool = False
    ) -> None:
        self.table: dict[str, np.ndarray] = {}
        self.misses = 0
        self.strict = strict  # a miss raises: a bulk load must never fall back to the model
        self._model: Embedder | None = None
        if vectors is not None:
            self.update(texts, vectors)

    def update(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.table.update(zip(texts, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIMENSION), np.float32)
        todo = []
        for i, text in enumerate(texts):
            vector = self.table.get(text)
            if vector is None:
                todo.append(i)
            else:
                out[i] = vector
        if todo:
            if self.strict:
                raise KeyError(f"no cached vector for {texts[todo[0]][:80]!r}")
            self.misses += len(todo)
            if self._model is None:
                self._model = get_embedder("default")
            out[todo] = self._model.embed([texts[i] for i in todo])
        return out


def _cached(path: Path, texts: list[str]) -> np.ndarray:
    if path.exists():
        vectors = np.load(path)
        if len(vectors) == len(texts):
            return vectors
    CACHE.mkdir(exist_ok=True)
    known = _from_stores()
    todo = [t for t in dict.fromkeys(texts) if t not in known]
    if todo:
        print(f"embedding {len(todo)} texts for {path.name} (once) ...", file=sys.stderr)
        model = get_embedder("default")
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            known.update(zip(part, model.embed(part), strict=True))
            print(f"  {start + len(part)}/{len(todo)}", file=sys.stderr)
    vectors = np.stack([known[t] for t in texts]).astype(np.float32)
    np.save(path, vectors)
    return vectors


def _from_stores() -> dict[str, np.ndarray]:
    """Default-model vectors already in trove stores under bench/.cache, by embedding text."""
    import apsw
    import sqlite_vec

    found: dict[str, np.ndarray] = {}
    for path in CACHE.glob("*.db"):
        try:
            flags = apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY
            conn = apsw.Connection(f"file:{path}?mode=ro", flags=flags)
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            lock = next(conn.execute("SELECT value FROM meta WHERE key = 'embedder'"), None)
            spec = json.loads(lock[0]) if lock else {}
            if spec.get("model_id") != MODEL_ID:
                continue
            table = spec["table"]
            [(sql,)] = conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,))
            float32 = "VIRTUAL" in str(sql).upper()  # vec0 (schema 14 and before)
            column = "embedding" if float32 else "codes"  # int16 codes (schema 15)
            rows = conn.execute(
                f"SELECT c.head, c.text, v.{column} FROM chunk c JOIN {table} v ON v.rowid = c.id"
            )
            for head, text, blob in rows:
                vector = np.frombuffer(blob, np.float32) if float32 else decode([blob])[0]
                found[embedding_text(head, text)] = vector
            conn.close()
        except apsw.Error:
            continue
    return found
