"""Live events over Server-Sent Events: a real HTTP client reads the stream while another
process writes the same file."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

ANA = "ana-token-0123456789"
BO = "bo-token-0123456789"
CONFIG = {
    "namespace": "ana",
    "tokens": [{"name": "ana", "token": ANA}, {"name": "bo", "token": BO, "namespace": "bo"}],
}

WRITER = """
import sys, trove
with trove.open(sys.argv[1], embedder=None) as kb:
    kb.add("in ana", namespace="ana", source="chat", doc_type="note", source_id="1")
    kb.add("in bo", namespace="bo", source="chat", source_id="2")
    kb.add("for all", namespace="bo", scope="global", source="wiki", source_id="3")
    try:
        with kb.backend.transaction():
            kb.add("never committed", namespace="ana", source="chat", source_id="4")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    doc = kb.add("to delete", namespace="ana", source="chat", doc_type="todo", source_id="5")
    kb.delete(doc)
    kb.restore(doc)
    kb.delete(doc)
    kb.purge()
"""


class Reader:
    """Reads an SSE stream on a thread, collecting its events."""

    def __init__(self, url: str, token: str, until: int, **params: Any) -> None:
        self.until = until
        self.events: list[dict[str, Any]] = []
        self.ids: list[str] = []
        self.ready = threading.Event()
        self.client = httpx.Client(base_url=url, timeout=30)
        self.request = self.client.build_request(
            "GET", "/v1/events", params=params, headers={"Authorization": f"Bearer {token}"}
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.ready.wait(20), "the stream did not open"

    def _read(self) -> None:
        response = self.client.send(self.request, stream=True)
        self.response = response
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        frame: dict[str, str] = {}
        try:
            for line in response.iter_lines():
                self.ready.set()
                if line.startswith(("event:", "data:", "id:")):
                    key, _, value = line.partition(":")
                    frame[key] = value.strip()
                elif not line and "data" in frame:
                    event = json.loads(frame["data"])
                    assert event["kind"] == frame["event"]
                    self.ids.append(frame.get("id", ""))
                    self.events.append(event)
                    frame = {}
                    if len(self.events) >= self.until:
                        break
        except (httpx.HTTPError, RuntimeError):  # closed by the test
            pass
        finally:  # closed on this thread: the server sees the disconnect at once
            response.close()

    def wait_for(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.events

    def close(self) -> None:
        self.thread.join(timeout=20)
        self.client.close()


@pytest.fixture
def served(tmp_path: Path, serve: Any) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "kb.db"
    with (
        trove.open(path, embedder=None) as kb,
        serve(create_app(kb, ServerConfig.from_dict(CONFIG))) as url,
    ):
        yield url, path


def test_events_from_another_process_reach_the_stream(served: tuple[str, Path]) -> None:
    url, path = served
    ana = Reader(url, ANA, 7)
    bo = Reader(url, BO, 2, kinds=["written"])
    try:
        subprocess.run([sys.executable, "-c", WRITER, str(path)], check=True, timeout=60)
        got = ana.wait_for(7)
        kinds = [(e["kind"], e["source"], e["doc_type"]) for e in got]
        assert kinds == [
            ("written", "chat", "note"),
            ("written", "wiki", ""),  # a global item: every namespace hears of it
            ("written", "chat", "todo"),
            ("deleted", "chat", "todo"),
            ("restored", "chat", "todo"),
            ("deleted", "chat", "todo"),
            ("purged", "chat", "todo"),
        ]  # nothing from bo's namespace, nothing for the write that rolled back
        assert all(e["namespace"] == "ana" or e["scope"] == "global" for e in got)
        assert bo.wait_for(2) and [e["source"] for e in bo.events] == ["chat", "wiki"]
        assert all(e["kind"] == "written" for e in bo.events)
        seqs = [int(i) for i in ana.ids]
        assert seqs == sorted(seqs)
    finally:
        ana.close()
        bo.close()


def test_a_client_resumes_after_the_last_event_it_saw(served: tuple[str, Path]) -> None:
    url, path = served
    first = Reader(url, ANA, 1)
    with trove.open(path, embedder=None) as kb:
        kb.add("one", namespace="ana", source_id="1")
        first.wait_for(1)
        first.close()
        kb.add("two", namespace="ana", source_id="2")
    with httpx.Client(base_url=url, timeout=30) as client:
        headers = {"Authorization": f"Bearer {ANA}", "Last-Event-ID": first.ids[0]}
        with client.stream("GET", "/v1/events", headers=headers) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    assert json.loads(line[5:])["kind"] == "written"
                    break


def test_the_stream_needs_a_token_and_known_kinds(served: tuple[str, Path]) -> None:
    url, _ = served
    with httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/v1/events").status_code == 401
        response = client.get(
            "/v1/events", params={"kinds": "nope"}, headers={"Authorization": f"Bearer {ANA}"}
        )
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_input"


def test_ctrl_c_stops_the_server_with_a_stream_open(tmp_path: Path) -> None:
    import signal
    import socket

    with socket.socket() as probe:  # a free port (uvicorn does not report port 0's)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    trove_cli = str(Path(sys.executable).with_name("trove"))
    db = str(tmp_path / "kb.db")
    server = subprocess.Popen(
        [trove_cli, "--db", db, "--embedder", "none", "serve", "--create", "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "running on" in line.lower() or "startup complete" in line.lower():
                break
        reader = Reader(f"http://127.0.0.1:{port}", "any-token", 1_000)
        server.send_signal(signal.SIGINT)  # as Ctrl-C: not waiting for the client to leave
        assert server.wait(timeout=30) is not None
        reader.thread.join(timeout=30)
        assert not reader.thread.is_alive()
        reader.client.close()
    finally:
        server.kill()
        server.wait()
