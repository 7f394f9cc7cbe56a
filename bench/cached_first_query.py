"""First query of a fresh process on a store whose index cache is in place, A/B.

    git archive main src | tar -x -C /tmp/base      # the other tree's sources
    python bench/cached_first_query.py --baseline-src /tmp/base/src --docs 10000 --repeat 16

Builds one store of ``--docs`` one-chunk documents (bench/bulk.py's text, cut to 40 words,
``hash:384`` vectors), copies it once per side and lets each side's ``warm()`` write its
own index cache (the two trees' cache formats may differ). Then, alternating which side
goes first, a fresh ``python`` per side opens its copy and times its first search in
``--mode semantic`` and ``hybrid`` (the cost of opening the cache: mapping it, reading the
vector table's ids, the first rescoring), then 30 more searches (warm p50). Prints the
median of each with the load average (and of the first query's CPU time in its thread,
which a shared machine's load moves less than wall time). bench/coldstart.py times whole
CLI commands; this isolates the search from Python's start-up, which is most of a
command's time;
``--cli`` adds that whole time, alternated the same way: exec of ``python -m trove --db X
search Q --mode M`` to its exit (wall, and the CPU time of the process).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bulk

_CHILD = """
import json, statistics, sys, time
import trove
kb = trove.open(sys.argv[1])
began, began_cpu = time.perf_counter(), time.thread_time()
kb.search(sys.argv[2], mode=sys.argv[3], limit=10)
first, first_cpu = time.perf_counter() - began, time.thread_time() - began_cpu
warm = []
for i in range(30):
    began = time.perf_counter()
    kb.search(f"{sys.argv[2]} w{i}", mode=sys.argv[3], limit=10)
    warm.append(time.perf_counter() - began)
warm_ms = statistics.median(warm) * 1000
print(json.dumps({"first_ms": first * 1000, "first_cpu_ms": first_cpu * 1000, "warm_ms": warm_ms}))
"""
_BUILD = """
import sys, bulk, trove
with trove.open(sys.argv[1], embedder="hash:384") as kb:
    docs = bulk.items(int(sys.argv[2]), 3)
    for doc in docs:
        doc["text"] = " ".join(doc["text"].split()[:40])
    kb.add_many(docs, batch_size=1000)
"""


def run(src: str, *argv: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([src, str(Path(__file__).parent)])
    done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return done.stdout


def timed_cli(src: str, path: Path, query: str, mode: str) -> dict[str, float]:
    """Wall and CPU milliseconds of one ``trove search`` process, exec to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    run(src, "-m", "trove", "--db", str(path), "search", query, "--mode", mode)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"cli_ms": wall * 1000, "cli_cpu_ms": cpu * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-src", required=True, help="the other tree's src folder")
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=16)
    parser.add_argument("--dir", type=Path, default=Path(__file__).parent / ".cache" / "ab")
    parser.add_argument("--cli", action="store_true", help="also time whole search commands")
    args = parser.parse_args()
    sides = {"baseline": args.baseline_src, "this": str(Path(__file__).parents[1] / "src")}
    args.dir.mkdir(parents=True, exist_ok=True)
    base = args.dir / f"base-{args.docs}.db"
    if not base.exists():
        run(sides["this"], "-c", _BUILD, str(base), str(args.docs))
    stores = {}
    for side, src in sides.items():
        path = args.dir / f"{side}-{args.docs}.db"
        for leftover in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(f"{path}.trove-index", ignore_errors=True)
        shutil.copyfile(base, path)
        run(src, "-c", f"import trove; trove.open({str(path)!r}).warm()")
        stores[side] = path
    found: dict[tuple[str, str], list[dict[str, float]]] = {}
    load = os.getloadavg()[0]
    rng = random.Random(9)
    for r in range(args.repeat):
        query = " ".join(rng.choices(bulk.WORDS, k=3))
        for mode in ("semantic", "hybrid"):
            for side in list(sides) if r % 2 == 0 else list(sides)[::-1]:
                out = run(sides[side], "-c", _CHILD, str(stores[side]), query, mode)
                row = json.loads(out.splitlines()[-1])
                if args.cli:
                    row.update(timed_cli(sides[side], stores[side], query, mode))
                found.setdefault((side, mode), []).append(row)
    for (side, mode), rows in found.items():
        first = statistics.median(row["first_ms"] for row in rows)
        warm = statistics.median(row["warm_ms"] for row in rows)
        first_cpu = statistics.median(row["first_cpu_ms"] for row in rows)
        line = f"{side} {mode}: first query {first:.1f} ms (its thread's CPU {first_cpu:.1f} ms)"
        line += f", warm p50 {warm:.2f} ms"
        if args.cli:
            cli = statistics.median(row["cli_ms"] for row in rows)
            cpu = statistics.median(row["cli_cpu_ms"] for row in rows)
            line += f", trove search {cli:.0f} ms (CPU {cpu:.0f} ms)"
        print(f"{line} (n={len(rows)})")
    print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
