"""Hybrid latency against its parts, measured so that load drift cancels (issue 15: hybrid
p50 within keyword p50 + semantic p50 + 5 ms).

    python bench/hybrid_latency.py                                  # SciFact test, default
    python bench/hybrid_latency.py --store long-cjk-ko-multilingual # a bench/long_cjk.py store
    python bench/hybrid_latency.py --queries 100 --rounds 2

bench/quality.py and bench/long_cjk.py time each mode over every query, one mode after
the other: on a shared machine the load changes between the passes, and a difference of a
few milliseconds between hybrid and the sum of the others drowns. Here every query is
searched in the three modes in turn (in a shuffled order, seeded), after a warm-up pass,
and each search's wall time and CPU time (of the whole process: the thread that embeds the
query counts) are kept; medians per mode, and hybrid's p50 minus the sum of the other
two, in wall and in CPU milliseconds. A/B: run it on two checkouts back to back
(``PYTHONPATH=/path/to/other/src``), each on its own copy of the store (``--db``).

Stores: ``scifact`` is bench/.cache/scifact-default.db (bench/quality.py builds it) with the
SciFact test claims; ``long-cjk-SCRIPT-EMBEDDER`` is bench/long_cjk.py's store with the
first CMRC 2018 dev questions in that script.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import _data
import long_cjk
import trove

CACHE = Path(__file__).resolve().parent / ".cache"
MODES = ("keyword", "semantic", "hybrid")


def workload(store: str, count: int) -> tuple[Path, list[str]]:
    """The store's file and its queries."""
    if store == "scifact":
        texts = list(_data.queries("scifact", "test").values())
        return CACHE / "scifact-default.db", texts[:count]
    if store.startswith("long-cjk-"):
        script = store.split("-")[2]
        texts = list(long_cjk.queries(script, count)[0].values())
        return CACHE / f"{store}.db", texts
    raise SystemExit(f"unknown store {store!r}: scifact or long-cjk-SCRIPT-EMBEDDER")


def measure(path: Path, texts: list[str], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU milliseconds of each search, per mode."""
    if not path.exists():
        raise SystemExit(f"{path} is missing: build it with bench/quality.py or long_cjk.py")
    times: dict[str, dict[str, list[float]]] = {m: {"wall": [], "cpu": []} for m in MODES}
    order = random.Random(0)
    with trove.open(path) as kb:
        kb.warm()
        for text in texts:  # warm-up pass
            for mode in MODES:
                kb.search(text, mode=mode, limit=10)
        for _ in range(rounds):
            for text in texts:
                modes = list(MODES)
                order.shuffle(modes)
                for mode in modes:
                    wall, cpu = time.perf_counter(), time.process_time()
                    kb.search(text, mode=mode, limit=10)
                    times[mode]["cpu"].append((time.process_time() - cpu) * 1000)
                    times[mode]["wall"].append((time.perf_counter() - wall) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="scifact")
    parser.add_argument("--queries", type=int, default=300, help="the first N queries")
    parser.add_argument("--rounds", type=int, default=1, help="timed passes over the queries")
    parser.add_argument("--db", type=Path, help="a copy of the store's file (an A/B's other side)")
    args = parser.parse_args()
    path, texts = workload(args.store, args.queries)
    path = args.db or path
    print(f"machine: {_data.machine()}  store: {path.name}  queries: {len(texts)}")
    times = measure(path, texts, args.rounds)
    for clock in ("wall", "cpu"):
        p50 = {mode: _data.median(times[mode][clock]) for mode in MODES}
        over = p50["hybrid"] - p50["keyword"] - p50["semantic"]
        row = "  ".join(f"{mode} {p50[mode]:.1f}" for mode in MODES)
        print(f"{clock:<4} p50 ms: {row}  hybrid - (keyword + semantic) = {over:+.1f}")


if __name__ == "__main__":
    main()
