"""A small OpenAI-compatible chat server on loopback, with canned answers (tests only).

``behaviour`` picks what it does: ``ok`` (a deterministic JSON answer per query),
``slow`` (sleeps past the client's timeout), ``error`` (HTTP 500) or ``garbage`` (a
reply that is not a chat completion). Every request is recorded.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any


class FakeLLM:
    def __init__(self) -> None:
        self.behaviour = "ok"
        self.requests: list[dict[str, Any]] = []
        self.answers: dict[str, dict[str, Any]] = {}
        self.url = ""

    def answer(self, prompt: str) -> dict[str, Any]:
        if prompt in self.answers:
            return self.answers[prompt]
        words = prompt.split()
        return {
            "keywords": [" ".join(w.upper() for w in words[:2])],
            "paraphrases": [f"about {prompt}"],
            "passage": f"A document about {prompt}.",
        }


def handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append(body)
            if fake.behaviour == "slow":
                time.sleep(1.5)
            if fake.behaviour == "error":
                self._send(500, b'{"error": "boom"}')
                return
            if fake.behaviour == "garbage":
                self._send(200, b"{not json")
                return
            prompt = body["messages"][-1]["content"]
            content = json.dumps(fake.answer(prompt))
            reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            self._send(200, json.dumps(reply).encode())

        def _send(self, status: int, data: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

    return Handler
