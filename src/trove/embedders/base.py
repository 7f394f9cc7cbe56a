"""The embedder contract: texts in, L2-normalized float32 rows out.

Script names
------------
``Embedder.languages`` says which writing systems a model embeds well, as a frozenset of
the names in :data:`SCRIPTS` (``None`` means all, or unknown). The store compares it with
:func:`scripts_of` of a query, e.g. to lean on keyword search for a CJK query when the
embedder only knows Latin text. The names are the lowercase Unicode script names, except
that Han, Hiragana, Katakana and Hangul are one script, ``"cjk"``, because models and
tokenizers treat them together.
"""

from __future__ import annotations

import functools
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import unicodedata

    import numpy as np
else:  # numpy and unicodedata load where first used: opening a store needs neither
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    unicodedata = LazyModule("unicodedata")


SCRIPTS = frozenset(
    {
        "latin",
        "greek",
        "cyrillic",
        "armenian",
        "georgian",
        "hebrew",
        "arabic",
        "devanagari",
        "bengali",
        "tamil",
        "thai",
        "cjk",
        "other",
    }
)

# The first word of a letter's Unicode name is its script for every script we name.
_NAME_PREFIX_TO_SCRIPT = {
    **{name.upper(): name for name in SCRIPTS - {"cjk", "other"}},
    "CJK": "cjk",
    "HIRAGANA": "cjk",
    "KATAKANA": "cjk",
    "KATAKANA-HIRAGANA": "cjk",
    "HANGUL": "cjk",
    "BOPOMOFO": "cjk",
}


def scripts_of(text: str, *, min_share: float = 0.0) -> frozenset[str]:
    """The scripts (names from :data:`SCRIPTS`) of the letters in ``text``; with
    ``min_share``, only those holding at least that share of its letters (so the α of
    "TNF-α" does not make an English sentence Greek)."""
    if text.isascii():  # most queries: their letters are Latin, no lookup per character
        return _LATIN if _ASCII_LETTER.search(text) else frozenset()
    counts: dict[str, int] = {}
    for char in text:
        if not unicodedata.category(char).startswith("L"):
            continue
        script = _script(char)
        counts[script] = counts.get(script, 0) + 1
    letters = sum(counts.values())
    return frozenset(s for s, n in counts.items() if n >= min_share * letters)


_LATIN = frozenset({"latin"})
_ASCII_LETTER = re.compile("[A-Za-z]")


@functools.lru_cache(maxsize=4096)
def _script(char: str) -> str:
    words = unicodedata.name(char, "").split()
    if words and words[0] in ("FULLWIDTH", "HALFWIDTH"):
        words = words[1:]
    return _NAME_PREFIX_TO_SCRIPT.get(words[0], "other") if words else "other"


def available_cores() -> int:
    """CPU cores this process may run on, the natural thread count for inference."""
    # sched_getaffinity honours taskset and container CPU sets; cpu_count does not.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; an all-zero row stays zero instead of NaN."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class Embedder(ABC):
    """Turns texts into vectors for semantic search.

    ``model_id`` is recorded in the store file: two embedders with the same id and
    dimension must produce interchangeable vectors.
    """

    model_id: str
    dimension: int
    languages: frozenset[str] | None = None
    # Whether an embedding is computed mostly outside the interpreter lock (one call into
    # onnxruntime or torch, a network request): then a hybrid search embeds its query on a
    # second thread while the keyword leg ranks. An embedder that computes in Python or in
    # many small numpy steps says False and is called inline: beside a busy Python thread
    # each of its steps would wait for the lock (bench/long_cjk.py: the multilingual model
    # took 3-6 times as long).
    releases_gil: bool = True

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), dimension)``, float32.

        Rows are L2-normalized, except that a text with no features gives a zero row.
        """

    def embed_query(self, text: str) -> np.ndarray:
        """The vector for one search query, shape ``(dimension,)``."""
        return self.embed([text])[0]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_id}>"


class ProbedDimension(Embedder):
    """An embedder that learns its dimension from its model when first asked, by embedding
    one probe text: a lazily loaded or remote model is not touched before then."""

    _dimension: int | None = None

    def _probe_dimension(self) -> int:
        return int(self.embed(["dimension probe"]).shape[1])

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = self._probe_dimension()
        return self._dimension

    @dimension.setter
    def dimension(self, value: int) -> None:
        self._dimension = value
