"""The reliability harnesses, CI-sized (bench/reliability.py runs them at full size).

About 30 s on the shared 2-core machine: 4 kills (2 during ``ingest --sync``, 2 in a
write loop), 4 processes × 4 s, 400 hypothesis cases, isolation, a file size limit.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import harness
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trove
from trove.errors import TroveError

pytestmark = [pytest.mark.slow, pytest.mark.sqlite_only]


def test_kills_leave_no_corrupt_half_written_or_lost_writes(tmp_path: Path) -> None:
    result = harness.crash_rounds(tmp_path, kills=4, seed=int(time.time()))
    assert result["kills"] == 4
    assert (result["corrupt"], result["half_written"], result["lost"]) == (0, 0, 0), result
    assert result["mid_run"] > 0  # not vacuous: some child was killed while it ran


def test_processes_writing_and_reading_one_fresh_store(tmp_path: Path) -> None:
    # Several writers reach the store's first vectors at once: one vector table.
    result = harness.concurrency(tmp_path / "kb.db", processes=4, seconds=4)
    assert (result["errors"], result["lost"], result["problems"]) == (0, 0, []), result
    assert result["vector_tables"] == 1
    assert result["writes"] > 0


hostile = st.one_of(
    st.sampled_from(harness.HOSTILE),
    st.sampled_from(harness.LONG_QUERIES),
    st.text(max_size=30),
    st.floats(),
    st.integers(),
    st.dictionaries(st.one_of(st.text(max_size=5), st.integers()), st.floats(), max_size=3),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with trove.open(tmp_path_factory.mktemp("fuzz") / "kb.db", embedder="hash:64") as kb:
        kb.add("a note about caches", source="s", source_id="1")
        harness.seed_store(kb)
        yield kb


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    op=st.sampled_from(["add", "search", "update", "link", "list", "get"]),
    name=st.sampled_from(sorted({*harness.ADD_FIELDS, *harness.SEARCH_ARGS, *harness.QUERY_ARGS})),
    value=hostile,
)
def test_library_raises_only_trove_errors_in_time(
    store: Any, op: str, name: str, value: Any
) -> None:
    start = time.monotonic()
    with contextlib.suppress(TroveError):
        harness.call(store, op, name, value)
    assert time.monotonic() - start < harness.BOUND_S


def test_namespaces_and_sessions_do_not_leak(tmp_path: Path) -> None:
    # The bench's harness, smallest: one round, one read each, stdio only without a
    # session (tests/interfaces/test_isolation.py is the CI-sized check).
    result = harness.isolation(str(tmp_path / "kb.db"), 1, reads=1, stdio_sessions=(None,))
    assert result["leaks"] == 0, result["examples"]
    assert result["checks"] > 500


def test_a_full_disk_fails_the_write_cleanly(tmp_path: Path) -> None:
    result = harness.disk_full(tmp_path / "kb.db", limit_bytes=1_500_000)
    assert result["how_it_ended"].startswith("refused StoreError"), result
    assert (result["lost"], result["problems"], result["searchable"]) == (0, [], True)


def test_every_importer_with_hostile_files(tmp_path: Path) -> None:
    import hostile_files

    result = hostile_files.hostile_imports(tmp_path, bound_s=60, bomb_bytes=8 << 20)
    assert result["cases"] >= 15 and result["failing"] == 0, result["failures"]


def test_export_import_round_trip_under_concurrent_writes(tmp_path: Path) -> None:
    import hostile_files

    result = hostile_files.round_trip_under_writes(tmp_path, rounds=4)
    assert result["failing"] == 0, result["failures"]


def test_odd_original_names_and_media_types(tmp_path: Path) -> None:
    import hostile_files

    result = hostile_files.odd_originals(str(tmp_path / "kb.db"), cases=200)
    assert (result["other"], result["bad_headers"]) == (0, 0), result["examples"]
    assert result["stored"] > 0 and result["refused"] > 0
