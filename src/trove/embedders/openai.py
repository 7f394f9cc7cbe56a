"""Any OpenAI-compatible ``/embeddings`` endpoint: OpenAI itself, Ollama, vLLM, LiteLLM ...

Needs httpx (extra ``openai``). Every failure (endpoint down, timeout, HTTP error, a
reply that is not an embeddings reply) is an EmbedderError that names the URL and never
the API key.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from trove.embedders.base import ProbedDimension, l2_normalize
from trove.errors import EmbedderError, MissingDependency

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"


class OpenAIEmbedder(ProbedDimension):
    """Vectors from a remote model; ``model_id`` is ``"openai:MODEL"``.

    ``base_url`` defaults to ``$TROVE_OPENAI_BASE_URL``, else OpenAI; ``api_key`` to
    ``$OPENAI_API_KEY`` (local servers need none). Without ``dimension``, the first
    use of :attr:`dimension` embeds a probe text to learn it. ``timeout`` bounds each
    phase of a request (connect, send, each read) in seconds.
    """

    languages = None

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimension: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 256,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingDependency("httpx", "openai", "the OpenAI embedder") from exc
        base = base_url or os.environ.get("TROVE_OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.model = model
        self.model_id = f"openai:{model}"
        self.url = base.rstrip("/") + "/embeddings"
        self.batch_size = batch_size
        self.timeout = timeout
        self._key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._dimension = dimension
        self._client: httpx.Client = httpx.Client(timeout=timeout)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Empty texts have no meaning to match on, and OpenAI rejects them.
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        rows = [
            self._request([texts[i] for i in wanted[start : start + self.batch_size]])
            for start in range(0, len(wanted), self.batch_size)
        ]
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if rows:
            vectors[wanted] = np.concatenate(rows)
        return l2_normalize(vectors)

    def close(self) -> None:
        self._client.close()

    def _request(self, texts: list[str]) -> np.ndarray:
        import httpx

        if not self._key and self.url.startswith(DEFAULT_BASE_URL):
            raise EmbedderError(
                f"{self.url} needs an API key: set OPENAI_API_KEY, or set"
                " TROVE_OPENAI_BASE_URL to a local server"
            )
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        try:
            response = self._client.post(self.url, json=body, headers=headers)
            response.raise_for_status()
            reply = response.json()
        except httpx.TimeoutException as exc:
            raise self._error(f"timed out after {self.timeout:g} s") from exc
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            raise self._error(f"HTTP {status}: {exc.response.text[:300]}") from exc
        except httpx.HTTPError as exc:
            raise self._error(f"{type(exc).__name__}: {exc}") from exc
        except ValueError as exc:
            raise self._error(f"the reply is not JSON: {exc}") from exc
        return self._vectors(reply, len(texts))

    def _vectors(self, reply: Any, expected: int) -> np.ndarray:
        try:
            items = sorted(reply["data"], key=lambda item: item["index"])
            vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise self._error(f"the reply is not an embeddings reply: {exc!r}") from exc
        if vectors.ndim != 2 or len(vectors) != expected:
            raise self._error(f"asked for {expected} vectors, got {len(vectors)}")
        with self._lock:
            if self._dimension is None:
                self._dimension = vectors.shape[1]
        if vectors.shape[1] != self._dimension:
            raise self._error(f"vectors of dimension {vectors.shape[1]}, not {self._dimension}")
        return vectors

    def _error(self, reason: str) -> EmbedderError:
        message = f"embedding request to {self.url} failed: {reason}"
        if self._key:
            # servers may echo the key back (OpenAI quotes part of a wrong one)
            message = message.replace(self._key, "***")
        return EmbedderError(message)
