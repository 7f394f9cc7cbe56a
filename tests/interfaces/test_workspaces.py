"""The workspaces both servers hand out: reads together under the store's lock, each
write alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import trove
from helpers.threads import run_threads
from trove.interfaces.config import Rights
from trove.interfaces.workspaces import Workspaces


def test_writes_take_turns(tmp_path: Path) -> None:
    # A write reads before it commits (is the key taken?) and updates the vector index
    # after: without turns, two writes of a new key both "add" it. Seen without the
    # store's write lock: two `written` events for one item in most runs of this test.
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        workspaces = Workspaces(kb, author_tier="explicit")
        events: list[str] = []
        kb.subscribe(lambda e: events.append(e["kind"]))

        def write(i: int) -> None:
            with workspaces.write(Rights(namespace="ops")) as ws:
                ws.write({"text": f"counter n{i:03d}x " * 50, "dedupe_key": "ctr"})

        run_threads(write, 50, together=True)
        assert events == ["written"] + ["updated"] * 49
        assert kb.stats().vectors == kb.stats().chunks == 1


def test_reads_share_and_a_waiting_write_goes_before_later_reads(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        workspaces = Workspaces(kb, author_tier="explicit")
        rights = Rights()
        both_inside = threading.Barrier(2, timeout=10)
        order: list[str] = []

        def read_together() -> None:
            with workspaces.read(rights):
                both_inside.wait()  # breaks (timeout) unless two reads are in at once
                order.append("read")

        run_threads(lambda _: read_together(), 2, timeout=20)
        assert order == ["read", "read"]

        order.clear()

        def write() -> None:
            with workspaces.write(rights):
                order.append("write")

        def late_read() -> None:
            with workspaces.read(rights):
                order.append("late read")

        with workspaces.read(rights):
            writer = start(write)
            deadline = time.monotonic() + 10
            while not kb._lock._waiting and time.monotonic() < deadline:
                time.sleep(0.001)  # until the write queues behind this read
            reader = start(late_read)
            time.sleep(0.05)
            assert order == []  # the late read does not slip in ahead of the write
        writer.join(10)
        reader.join(10)
        assert order == ["write", "late read"]


def start(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target)
    thread.start()
    return thread
