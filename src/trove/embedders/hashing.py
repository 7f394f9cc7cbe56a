"""A tiny deterministic embedder for tests about plumbing, not about meaning."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from trove.embedders.base import Embedder, l2_normalize

if TYPE_CHECKING:
    import hashlib

    import numpy as np
else:  # numpy and hashlib load where first used: opening a store needs neither
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    hashlib = LazyModule("hashlib")

_WORD = re.compile(r"\w+")


class HashEmbedder(Embedder):
    """Feature hashing of lowercase words and their character trigrams.

    Instant and dependency-free; texts that share words or word fragments get a positive
    cosine, in any script. The same text gives the same vector in every process.
    """

    languages = None
    releases_gil = False  # pure Python (see Embedder)

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be positive, not {dimension}")
        self.dimension = dimension
        self.model_id = f"hash:{dimension}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in features(text):
                vectors[row, bucket(feature, self.dimension)] += 1.0
        return l2_normalize(vectors)


def features(text: str) -> Iterator[str]:
    for word in _WORD.findall(text.lower()):
        yield word
        padded = f" {word} "
        # "#" keeps a trigram from ever equalling a three-letter word
        for start in range(len(padded) - 2):
            yield "#" + padded[start : start + 3]


@lru_cache(maxsize=65536)
def bucket(feature: str, dimension: int) -> int:
    # hash() is salted per process; blake2b is stable across runs and machines
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % dimension
