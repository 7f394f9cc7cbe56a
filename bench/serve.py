"""Search throughput and latency over HTTP: a real ``trove serve`` and concurrent clients.

    python bench/serve.py [--embedder none|hash:64|default] [--clients 8] [--seconds 20]

Loads the SciFact corpus (5,183 abstracts) into a fresh store, starts ``trove serve`` as
its own process on a loopback port, and has N client threads (one keep-alive connection
each) send SciFact's test queries to ``POST /v1/search`` (limit 10) for a fixed time
after a warm-up. Prints requests/s and p50/p99 latency as the clients saw them, and the
library's own single-thread latency on the same store for comparison. ``none`` is
keyword search (BM25); ``hash:64`` is hybrid search with the feature-hashing test
embedder (it exercises the vector path without a model's cost); ``default`` is hybrid
with the bundled MiniLM model (loading takes minutes on 2 cores).

The clients share the machine with the server: on a small machine their own CPU use
lowers the figures.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

import _data
import trove

TOKEN = "bench-token-0123456789abcdef"


def load(path: Path, embedder: str | None) -> None:
    docs = _data.documents("scifact")
    started = time.perf_counter()
    with trove.open(path, embedder=embedder) as kb:
        kb.add_many(docs)
    print(f"loaded {len(docs)} documents in {time.perf_counter() - started:.1f} s", flush=True)


def library_latency(path: Path, embedder: str | None, queries: list[str]) -> list[float]:
    with trove.open(path, embedder=embedder) as kb:
        for query in queries[:20]:  # warm-up: caches, the vector index, the model
            kb.search(query)
        latencies = []
        for query in queries:
            started = time.perf_counter()
            kb.search(query)
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(path: Path, embedder: str, port: int) -> subprocess.Popen[bytes]:
    trove_cli = Path(sys.executable).with_name("trove")
    args = [str(trove_cli), "--db", str(path), "--embedder", embedder]
    args += ["serve", "--port", str(port), "--token", TOKEN]
    quiet = subprocess.DEVNULL  # the access log would cost the server time and fill the screen
    server = subprocess.Popen(args, stdout=quiet, stderr=quiet)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=1).raise_for_status()
            return server
        except httpx.HTTPError:
            if server.poll() is not None:
                raise SystemExit("trove serve exited; run it by hand to see why") from None
            time.sleep(0.2)
    server.kill()
    raise SystemExit("trove serve did not start within 120 s")


def hammer(
    url: str, queries: list[str], clients: int, seconds: float
) -> tuple[list[float], float]:
    """Each client sends queries back to back; returns latencies (ms) and elapsed seconds."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    stop = threading.Event()
    errors: list[str] = []

    def client(n: int) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            i = n
            while not stop.is_set():
                started = time.perf_counter()
                response = http.post("/v1/search", json={"query": queries[i % len(queries)]})
                elapsed = (time.perf_counter() - started) * 1000
                if response.status_code != 200:
                    errors.append(response.text)
                    return
                latencies[n].append(elapsed)
                i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"search failed: {errors[0]}")
    return [ms for per_client in latencies for ms in per_client], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none", help="none (keyword), hash:64, default")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    options = parser.parse_args()
    embedder = None if options.embedder == "none" else options.embedder
    queries = list(_data.queries("scifact", "test").values())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kb.db"
        load(path, embedder)
        direct = library_latency(path, embedder, queries)
        port = free_port()
        server = start_server(path, options.embedder, port)
        try:
            url = f"http://127.0.0.1:{port}"
            hammer(url, queries, options.clients, options.warmup)
            latencies, elapsed = hammer(url, queries, options.clients, options.seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)
    mode = "keyword" if embedder is None else f"hybrid ({options.embedder})"
    print(f"machine: {_data.machine()}")
    print(f"mode: {mode}; {options.clients} clients for {elapsed:.1f} s")
    print(
        f"HTTP: {len(latencies) / elapsed:.0f} requests/s, "
        f"p50 {_data.percentile(latencies, 0.5):.1f} ms, "
        f"p99 {_data.percentile(latencies, 0.99):.1f} ms ({len(latencies)} requests)"
    )
    print(
        f"library, one thread: p50 {_data.percentile(direct, 0.5):.1f} ms, "
        f"p99 {_data.percentile(direct, 0.99):.1f} ms"
    )


if __name__ == "__main__":
    main()
