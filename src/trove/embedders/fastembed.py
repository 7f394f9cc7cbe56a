"""Any fastembed model (ONNX, no PyTorch), ``fastembed:NAME`` (extra ``fastembed``).

fastembed may download the model on first use; trove itself downloads nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from trove.embedders.base import ProbedDimension, l2_normalize
from trove.errors import EmbedderError, MissingDependency


class FastEmbedEmbedder(ProbedDimension):
    """A fastembed ``TextEmbedding`` model by name, loaded on first use.

    ``options`` go to ``TextEmbedding(model_name=name, **options)`` (cache_dir, threads ...).
    """

    languages = None

    def __init__(self, name: str, *, batch_size: int = 32, **options: Any) -> None:
        try:
            import fastembed  # noqa: F401
        except ImportError as exc:
            raise MissingDependency("fastembed", "fastembed", "the fastembed embedder") from exc
        self.name = name
        self.model_id = f"fastembed:{name}"
        self.batch_size = batch_size
        self._options = options
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = list(self._load().embed(list(texts), batch_size=self.batch_size))
        return l2_normalize(np.array(vectors))

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from fastembed import TextEmbedding

                try:
                    self._model = TextEmbedding(model_name=self.name, **self._options)
                except Exception as exc:  # unknown names and failed downloads alike
                    raise EmbedderError(
                        f"cannot load the fastembed model {self.name!r}: {exc}"
                    ) from exc
            return self._model
