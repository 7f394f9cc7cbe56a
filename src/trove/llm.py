"""A chat model behind any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI,
Ollama, vLLM, llama.cpp server), used only when the user configures one.

``TROVE_LLM=openai:MODEL`` names the model; ``TROVE_LLM_BASE_URL`` the endpoint (default
OpenAI's); ``TROVE_LLM_API_KEY`` (else ``OPENAI_API_KEY``) its key, which local servers do
not need; ``TROVE_LLM_TIMEOUT`` the seconds one call may take (default 3). Every failure
is an :class:`LLMError` naming the URL, never the key: callers fall back, never fail.
Needs httpx (extra ``openai``), the client the OpenAI embedder uses too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trove.errors import InvalidInput, MissingDependency, TroveError

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT = 3.0
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


class LLMError(TroveError):
    """The chat model could not answer (down, slow, HTTP error, a reply that is not JSON)."""


class ChatModel:
    """One chat model; :meth:`json` asks it for a JSON object."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingDependency("httpx", "openai", "an LLM (TROVE_LLM)") from exc
        if not model:
            raise InvalidInput("an LLM needs a model name, e.g. openai:llama3.2")
        self.model = model
        self.model_id = f"openai:{model}"
        self.url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        self.timeout = timeout
        self._key = api_key
        self._client: httpx.Client = httpx.Client(timeout=timeout)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ChatModel | None:
        """The model ``$TROVE_LLM`` names, or None when none is configured (the default)."""
        env = os.environ if env is None else env
        spec = env.get("TROVE_LLM", "").strip()
        return cls.from_spec(spec, env) if spec else None

    @classmethod
    def from_spec(
        cls, spec: str, env: Mapping[str, str] | None = None, **options: Any
    ) -> ChatModel:
        """The model ``spec`` names (``openai:MODEL``), reached as ``$TROVE_LLM_BASE_URL``,
        ``$TROVE_LLM_API_KEY`` and ``$TROVE_LLM_TIMEOUT`` say, however it was named (in
        ``$TROVE_LLM`` or as ``trove.open(llm=...)``); ``options`` override them."""
        kind, sep, model = spec.partition(":")
        if kind != "openai" or not sep:
            raise InvalidInput(
                f"unknown LLM {spec!r}: use openai:MODEL (any OpenAI-compatible endpoint, "
                "e.g. Ollama with TROVE_LLM_BASE_URL=http://127.0.0.1:11434/v1)"
            )
        env = os.environ if env is None else env
        timeout = env.get("TROVE_LLM_TIMEOUT") or DEFAULT_TIMEOUT
        try:
            seconds = float(timeout)
        except ValueError:
            raise InvalidInput(f"TROVE_LLM_TIMEOUT must be seconds, not {timeout!r}") from None
        settings: dict[str, Any] = {
            "base_url": env.get("TROVE_LLM_BASE_URL"),
            "api_key": env.get("TROVE_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
            "timeout": seconds,
        }
        return cls(model, **{**settings, **options})

    def close(self) -> None:
        self._client.close()

    def complete(self, system: str, user: str) -> str:
        """The model's answer to one exchange (temperature 0: the same question, the same
        answer, which is what makes caching it fair)."""
        import httpx

        if not self._key and self.url.startswith(DEFAULT_BASE_URL):
            raise LLMError(f"{self.url} needs an API key: set TROVE_LLM_API_KEY")
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        try:
            response = self._client.post(self.url, json=body, headers=headers)
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"]["content"])
        except httpx.TimeoutException as exc:
            raise self._error(f"timed out after {self.timeout:g} s") from exc
        except httpx.HTTPStatusError as exc:
            raise self._error(f"HTTP {exc.response.status_code}") from exc
        except httpx.HTTPError as exc:
            raise self._error(f"{type(exc).__name__}: {exc}") from exc
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise self._error(f"not a chat completion: {exc!r}") from exc

    def json(self, system: str, user: str) -> dict[str, Any]:
        """The model's answer parsed as a JSON object (a Markdown code fence is allowed)."""
        text = _FENCE.sub("", self.complete(system, user).strip())
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise self._error(f"the answer is not JSON: {text[:120]!r}") from exc
        if not isinstance(value, dict):
            raise self._error("the answer is not a JSON object")
        return value

    def _error(self, reason: str) -> LLMError:
        message = f"LLM request to {self.url} failed: {reason}"
        return LLMError(message.replace(self._key, "***") if self._key else message)


def strings(value: Any, limit: int) -> list[str]:
    """Up to ``limit`` distinct non-empty strings from a model's list (anything else: [])."""
    if not isinstance(value, list):
        return []
    found = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    return list(dict.fromkeys(found))[:limit]
