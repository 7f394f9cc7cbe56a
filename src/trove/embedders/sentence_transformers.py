"""Any sentence-transformers model, ``sentence-transformers:NAME`` (extra of that name).

The library may download the model on first use; trove itself downloads nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from trove.embedders.base import ProbedDimension, l2_normalize
from trove.errors import EmbedderError, MissingDependency


class SentenceTransformersEmbedder(ProbedDimension):
    """A sentence-transformers model by Hugging Face name or local path, loaded on first use.

    ``options`` go to ``SentenceTransformer(name, **options)`` (device, revision ...).
    """

    languages = None

    def __init__(self, name: str, *, batch_size: int = 32, **options: Any) -> None:
        try:
            import sentence_transformers  # noqa: F401
        except ImportError as exc:
            raise MissingDependency(
                "sentence-transformers",
                "sentence-transformers",
                "the sentence-transformers embedder",
            ) from exc
        self.name = name
        self.model_id = f"sentence-transformers:{name}"
        self.batch_size = batch_size
        self._options = options
        self._model: Any = None
        self._lock = threading.Lock()

    def _probe_dimension(self) -> int:
        declared = self._load().get_sentence_embedding_dimension()
        return int(declared) if declared else super()._probe_dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return l2_normalize(vectors)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                try:
                    self._model = SentenceTransformer(self.name, **self._options)
                except Exception as exc:  # the library raises whatever its hub client does
                    raise EmbedderError(
                        f"cannot load the sentence-transformers model {self.name!r}: {exc}"
                    ) from exc
            return self._model
