"""The OpenAI-compatible embedder against a real HTTP server on loopback."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

pytest.importorskip("httpx", reason="needs the openai extra")

from trove.embedders.openai import OpenAIEmbedder
from trove.errors import EmbedderError

KEY = "sk-test-DO-NOT-LEAK-1234"
DIMENSION = 8


def fake_vector(text: str) -> list[float]:
    """Deterministic and deliberately not unit length."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) + 1.0 for b in digest[:DIMENSION]]


class Handler(BaseHTTPRequestHandler):
    """Behaves by the first path segment: /ok/v1/embeddings, /error500/v1/embeddings ..."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.requests.append({"body": body, "auth": self.headers.get("Authorization")})
        mode = self.path.split("/")[1]
        if mode == "ok":
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(text)}
                for i, text in enumerate(body["input"])
            ]
            # servers need not answer in input order; the index says where each goes
            self.reply(200, json.dumps({"object": "list", "data": data[::-1]}))
        elif mode == "error500":
            self.reply(500, '{"error": {"message": "model crashed"}}')
        elif mode == "echo-key":
            self.reply(401, f'{{"error": "bad key {self.headers["Authorization"]}"}}')
        elif mode == "malformed":
            self.reply(200, '{"data": [{"embedding": [1.0, 2')
        elif mode == "not-embeddings":
            self.reply(200, '{"result": "hello"}')
        elif mode == "slow":
            time.sleep(3)
            self.reply(200, "{}")

    def reply(self, status: int, text: str) -> None:
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def fresh_log() -> None:
    Handler.requests.clear()


def embedder(server: str, mode: str, **options: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder("test-model", base_url=f"{server}/{mode}/v1", api_key=KEY, **options)


def test_vectors_are_normalized_and_in_input_order(server: str) -> None:
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    vectors = embedder(server, "ok", batch_size=2).embed(texts)
    expected = np.array([fake_vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert vectors.dtype == np.float32
    assert np.allclose(vectors, expected, atol=1e-6)
    assert [len(r["body"]["input"]) for r in Handler.requests] == [2, 2, 1]
    assert {r["auth"] for r in Handler.requests} == {f"Bearer {KEY}"}
    assert Handler.requests[0]["body"]["model"] == "test-model"


def test_the_dimension_is_discovered_with_one_probe(server: str) -> None:
    remote = embedder(server, "ok")
    assert remote.dimension == DIMENSION
    assert remote.dimension == DIMENSION
    assert len(Handler.requests) == 1
    assert remote.embed([]).shape == (0, DIMENSION)
    assert remote.model_id == "openai:test-model"


def test_empty_texts_are_zero_rows_without_a_request(server: str) -> None:
    vectors = embedder(server, "ok", dimension=DIMENSION).embed(["", "  "])
    assert vectors.shape == (2, DIMENSION)
    assert not vectors.any()
    assert Handler.requests == []


def test_a_declared_dimension_is_checked(server: str) -> None:
    with pytest.raises(EmbedderError, match="dimension 8, not 16"):
        embedder(server, "ok", dimension=16).embed(["text"])


def test_environment_supplies_url_and_key(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROVE_OPENAI_BASE_URL", f"{server}/ok/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    remote = OpenAIEmbedder("m")
    assert remote.url == f"{server}/ok/v1/embeddings"
    remote.embed(["x"])
    assert Handler.requests[0]["auth"] == "Bearer sk-from-env"


def test_openai_without_a_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TROVE_OPENAI_BASE_URL", raising=False)
    with pytest.raises(EmbedderError, match="set OPENAI_API_KEY"):
        OpenAIEmbedder().embed(["x"])


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("error500", "HTTP 500: .*model crashed"),
        ("echo-key", "HTTP 401"),
        ("malformed", "not JSON"),
        ("not-embeddings", "not an embeddings reply"),
        ("no-such-mode", "RemoteProtocolError"),  # the handler closes without replying
    ],
)
def test_failures_name_the_url_and_never_the_key(server: str, mode: str, reason: str) -> None:
    remote = embedder(server, mode)
    with pytest.raises(EmbedderError, match=reason) as caught:
        remote.embed(["text"])
    assert f"{server}/{mode}/v1/embeddings" in str(caught.value)
    assert KEY not in str(caught.value)


def test_a_key_echoed_by_the_server_is_masked(server: str) -> None:
    with pytest.raises(EmbedderError, match=r"bad key Bearer \*\*\*"):
        embedder(server, "echo-key").embed(["text"])


def test_a_slow_server_times_out_within_the_timeout(server: str) -> None:
    remote = embedder(server, "slow", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(EmbedderError, match=r"timed out after 0\.5 s") as caught:
        remote.embed(["text"])
    assert time.monotonic() - started < 1.5
    assert KEY not in str(caught.value)


def test_a_closed_port_fails_fast() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    remote = OpenAIEmbedder("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=5)
    started = time.monotonic()
    with pytest.raises(EmbedderError, match=f"127.0.0.1:{port}/v1/embeddings failed: Connect"):
        remote.embed(["text"])
    assert time.monotonic() - started < 5
