"""An embedder that keeps every vector on disk, keyed by model and text (bench only).

Embedding is what the benchmarks on the 2-core machine wait for: a store rebuilt, or the
same text in another set, costs a file read. Vectors live under ROOT/<model id>/ as one
.npy per text, named by the sha256 of the text.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trove.embedders import Embedder

ROOT = Path(os.environ.get("TROVE_BENCH_VCACHE", "/work/vcache"))


class CachedEmbedder(Embedder):
    """``inner`` with a disk cache in front: same model id, dimension and languages, so a
    store built through it is the store ``inner`` would build."""

    def __init__(self, inner: Embedder, root: Path = ROOT) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.languages = inner.languages
        self.releases_gil = inner.releases_gil
        self.folder = root / inner.model_id
        self.folder.mkdir(parents=True, exist_ok=True)
        self.hits = self.misses = 0

    def _path(self, text: str) -> Path:
        return self.folder / (hashlib.sha256(text.encode("utf-8")).hexdigest() + ".npy")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            path = self._path(text)
            if path.exists():
                vectors[i] = np.load(path)
            else:
                missing.append(i)
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                part = self._path(texts[i]).with_suffix(".part.npy")
                np.save(part, vector)
                part.replace(self._path(texts[i]))
        return vectors
