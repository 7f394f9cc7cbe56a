"""A slow search holds no other reader back (a real server on loopback).

A 100 KB raw search over HTTP ran 140 s, and a ``GET /v1/stats`` sent meanwhile answered
after 139 s: the search's FTS5 statement held the store's one connection. Here a search
is stopped in the middle of its ranking statement (SQLite's progress handler waits) while
other requests are answered; it is then let go and answers too. Nothing is timed but
generous bounds: the assertions are on what finished first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app
from trove.search import deadline

Serve = Callable[[Any], AbstractContextManager[str]]
TOKEN = "slow-search-token-0123456789"


def test_a_search_in_its_ranking_statement_holds_back_no_other_reader(
    tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = threading.Event(), threading.Event()
    expired = deadline.expired

    def stalled() -> bool:
        # Called by SQLite every thousand steps of the search's statement: the first
        # call waits until the other readers have been answered.
        if not started.is_set():
            started.set()
            release.wait(60)
        return expired()

    config = ServerConfig.from_dict({"tokens": [{"name": "t", "token": TOKEN}]}, origin="test")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        # A word in 60 chunks: the statement runs past SQLite's first progress call.
        rows = [
            {"text": f"word{i % 5} " * 200, "source": "s", "source_id": str(i)} for i in range(300)
        ]
        kb.add_many(rows)
        doc_id = kb.search("word1", mode="keyword", limit=1)[0].doc_id
        monkeypatch.setattr(deadline, "expired", stalled)
        with (
            serve(create_app(kb, config)) as url,
            httpx.Client(base_url=url, headers=headers, timeout=60) as http,
            ThreadPoolExecutor(1) as pool,
        ):
            body = {"query": "word1 OR word2 OR word3", "raw": True, "mode": "keyword"}
            search = pool.submit(http.post, "/v1/search", json=body)
            try:
                assert started.wait(60), "the search never reached its ranking statement"
                with httpx.Client(base_url=url, headers=headers, timeout=20) as other:
                    stats = other.get("/v1/stats")
                    item = other.get(f"/v1/items/{doc_id}")
                assert not search.done()  # still held in its statement
            finally:
                release.set()
            assert (stats.status_code, item.status_code) == (200, 200)
            assert stats.json()["documents"] == 300
            found = search.result(timeout=60)
            assert found.status_code == 200, found.text
            assert len(found.json()["hits"]) == 10
