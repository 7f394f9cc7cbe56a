"""The crash and concurrency harnesses on PostgreSQL, CI-sized (tests/reliability/
test_reliability.py runs them on SQLite; bench/reliability.py at full size).

A client killed with SIGKILL mid-write leaves its transaction to the server, which rolls
it back: nothing half-written, nothing acknowledged lost, ``trove check`` clean."""

from __future__ import annotations

import time
from pathlib import Path

import harness
import pytest

pytestmark = pytest.mark.slow


def test_kills_of_a_client_leave_no_half_written_or_lost_writes(
    tmp_path: Path, pg_target: str
) -> None:
    result = harness.crash_rounds(tmp_path, kills=4, seed=int(time.time()), target=pg_target)
    assert result["kills"] == 4
    assert (result["corrupt"], result["half_written"], result["lost"]) == (0, 0, 0), result
    assert result["mid_run"] > 0 and result["acked"] > 0  # not vacuous


def test_processes_writing_and_reading_one_fresh_postgres_store(pg_target: str) -> None:
    # Several writers reach the store's first vectors at once: one vector table.
    result = harness.concurrency(pg_target, processes=4, seconds=4)
    assert (result["errors"], result["lost"], result["problems"]) == (0, 0, []), result
    assert result["vector_tables"] == 1
    assert result["writes"] > 0
