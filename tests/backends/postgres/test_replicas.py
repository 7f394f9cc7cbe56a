"""Read replicas on loopback: a primary and a streaming hot standby (helpers/pg_standby).

Reads outside a write go to the standby once it has replayed this handle's writes; a
write is read back at once (from the primary while the standby lags); a standby killed
mid-load costs no read and no acknowledged write."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

import trove
from helpers.pg_standby import Pair, primary_and_standby, wait_for
from trove.errors import InvalidInput, StoreError
from trove.interfaces.cli import cli


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    with primary_and_standby() as servers:
        yield servers


_schemas = iter(range(10**6))


@pytest.fixture
def urls(pair: Pair) -> Iterator[tuple[str, str]]:
    """The primary's and the standby's URL of a schema of this test's own."""
    schema = f"rep_{next(_schemas)}"
    yield f"{pair.primary_url}&schema={schema}", pair.standby_url
    with psycopg.connect(pair.primary_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_reads_go_to_the_standby_and_see_this_handles_writes(urls: tuple[str, str]) -> None:
    primary, standby = urls
    with trove.open(primary, replicas=[standby], embedder="hash:64") as kb:
        replicas = kb.backend.replicas  # type: ignore[attr-defined]
        for i in range(30):
            doc_id = kb.add(f"note {i} about zebra{i}", source="s", source_id=str(i))
            # Read at once: the standby may not have it yet; the read still must.
            assert kb.get(doc_id) is not None
            hits = kb.search(f"zebra{i}", mode="keyword")
            assert [h.doc_id for h in hits][:1] == [doc_id]
            assert kb.search(f"note {i} zebra{i}", mode="semantic", limit=30)
        assert wait_for(lambda: kb.search("zebra3", mode="keyword") and sum(replicas.served) > 5)
        before = sum(replicas.served)
        assert [h.doc_id for h in kb.search("zebra7", mode="keyword")]
        assert sum(replicas.served) > before  # caught up: the standby answered


def test_a_standby_that_does_not_answer_sends_reads_to_the_primary(urls: tuple[str, str]) -> None:
    primary, _ = urls
    nowhere = primary.split("?")[0] + "?host=/nonexistent-socket-dir&port=5999"
    with trove.open(primary, replicas=[nowhere], embedder=None) as kb:
        doc_id = kb.add("only the primary has this", source="s", source_id="1")
        assert kb.get(doc_id) is not None
        assert kb.search("primary", mode="keyword")
        assert kb.backend.replicas.served == [0]  # type: ignore[attr-defined]


def test_a_server_that_is_not_a_standby_never_serves_reads(urls: tuple[str, str]) -> None:
    primary, _ = urls
    with trove.open(primary, replicas=[primary.split("&schema=")[0]], embedder=None) as kb:
        kb.add("a note on the primary", source="s", source_id="1")
        time.sleep(0.2)
        assert kb.search("note", mode="keyword")
        assert kb.backend.replicas.served == [0]  # type: ignore[attr-defined]


def test_bad_replica_options_are_refused(urls: tuple[str, str], tmp_path: Path) -> None:
    primary, standby = urls
    with pytest.raises(InvalidInput, match="SQLite store takes none"):
        trove.open(tmp_path / "kb.db", replicas=[standby])
    assert not (tmp_path / "kb.db").exists()
    with pytest.raises(InvalidInput, match="list of postgresql"):
        trove.open(primary, replicas=standby)
    with pytest.raises(StoreError, match="serves the primary's schema"):
        trove.open(primary, replicas=[standby + "&schema=other"])
    with pytest.raises(StoreError, match="must be a postgresql:// URL"):
        trove.open(primary, replicas=["kb.db"])
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "kb.db"), "serve", "--replica", standby]
    )
    assert result.exit_code == 1 and "SQLite store takes none" in result.output


def test_killing_the_standby_mid_load_loses_no_read_and_no_write() -> None:
    with primary_and_standby() as pair:  # its own: this test kills the standby
        _kill_mid_load(pair, pair.primary_url, pair.standby_url)


def _kill_mid_load(pair: Pair, primary: str, standby: str) -> None:
    acked: list[str] = []
    failures: list[str] = []
    reads = [0, 0]  # before and after the kill
    slowest = [0.0]  # the slowest read after the kill, in seconds
    stop = threading.Event()
    killed = threading.Event()
    with trove.open(primary, replicas=[standby], embedder="hash:64") as kb:

        def write() -> None:
            i = 0
            while not stop.is_set():
                acked.append(kb.add(f"load note {i} quokka", source="w", source_id=str(i)))
                i += 1

        def read() -> None:
            while not stop.is_set():
                began = time.monotonic()
                try:
                    kb.search("quokka", mode="keyword", limit=5)
                    kb.search("load note", limit=5)
                    if acked:
                        assert kb.get(acked[-1]) is not None, "an acknowledged write unread"
                    reads[killed.is_set()] += 1
                    if killed.is_set():
                        slowest[0] = max(slowest[0], time.monotonic() - began)
                except Exception as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=f) for f in (write, read, read)]
        for thread in threads:
            thread.start()
        served = kb.backend.replicas.served  # type: ignore[attr-defined]
        assert wait_for(lambda: served[0] > 20 and len(acked) > 20)
        pair.kill_standby()
        killed.set()
        time.sleep(2.0)
        stop.set()
        for thread in threads:
            thread.join()
        assert failures == []
        assert reads[1] > 10  # reads went on, from the primary
        # Not stalled on the dead standby: a few 0.25 s waits at most, on a shared machine.
        assert slowest[0] < 3.0, slowest
        assert all(kb.get(doc_id) is not None for doc_id in acked)
        assert kb.stats().documents == len(acked)
        # Started again, the standby catches up and serves reads once its rest is over.
        pair.start_standby()
        before = served[0]
        assert wait_for(lambda: kb.search("quokka", mode="keyword") and served[0] > before, 30)


def test_a_corpus_count_older_than_the_postings_still_ranks(pg_target: str) -> None:
    # A handle's chunk count is cached; a standby (or another process) may show term
    # counts newer than it, larger than the count: the idf must not take ln of < 0.
    with (
        trove.open(pg_target, embedder=None) as reader,
        trove.open(pg_target, embedder=None) as writer,
    ):
        writer.add("one wombat", source="s", source_id="0")
        assert reader.search("wombat", mode="keyword")  # caches a count of 1 chunk
        writer.add_many(
            [
                {"text": f"wombat {i} 你好", "source": "s", "source_id": str(i)}
                for i in range(1, 20)
            ]
        )
        assert len(reader.search("wombat", mode="keyword", limit=50)) == 20
        assert reader.search("你好", mode="keyword")


def test_trove_serve_with_a_replica_reads_its_writes(urls: tuple[str, str], pair: Pair) -> None:
    import socket
    import subprocess
    import sys

    import httpx

    primary, standby = urls
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cli_main = "import sys; from trove.interfaces.cli import cli; cli(sys.argv[1:])"
    args = ["--db", primary, "--embedder", "none", "serve", "--create", "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-c", cli_main, *args, "--replica", standby],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_for(lambda: _up(base), 60), server.stderr and server.poll()
        with httpx.Client(base_url=base, timeout=30) as http:
            for i in range(10):
                item = {"text": f"served note {i} ocelot{i}", "source": "h", "source_id": str(i)}
                doc_id = http.post("/v1/items", json=item).json()["id"]
                found = http.post("/v1/search", json={"query": f"ocelot{i}", "mode": "keyword"})
                assert [h["doc_id"] for h in found.json()["hits"]][:1] == [doc_id]
        # The server's connections to the standby last ran a read of the store's rows.
        with psycopg.connect(pair.standby_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                "AND pid <> pg_backend_pid() AND (query LIKE '%chunk%' OR query LIKE '%document%')"
            ).fetchone()
        assert row is not None and row[0] >= 1
    finally:
        server.terminate()
        server.wait(30)


def _up(base: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
