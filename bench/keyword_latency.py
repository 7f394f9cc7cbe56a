"""Keyword search latency on the SciFact store, end to end (snippets, calibration), in one
warm process: the indexes built (``Store.warm``), every test query searched once to warm
up, then ``--rounds`` timed passes over all of them at limit 10; prints the median and p95
of each pass and over all, wall clock and this thread's CPU time (on a loaded machine the
CPU time is the steadier figure: the wall clock also counts the time other processes held
the cores).

    python bench/keyword_latency.py                       # 300 queries x 3 rounds
    python bench/keyword_latency.py --profile 20          # cProfile, top 20 by cumulative time
    python bench/keyword_latency.py --profile 20 --sort tottime
    python bench/keyword_latency.py --read snippet        # and read every hit's snippet

A search's hits choose their passages when the first hit's ``chunk`` or ``snippet`` is
read (trove.hits.Hit): without ``--read`` a search's time leaves that out, as a caller
that takes only ids and scores does; ``--read snippet`` counts it, as the CLI, HTTP and
MCP do.

Uses the quality benchmark's store (bench/.cache/scifact-default.db, bench/quality.py
builds it). Quote the load (``uptime``) with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from pathlib import Path

import _data
import trove

STORE = Path(__file__).resolve().parent / ".cache" / "scifact-default.db"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="keyword")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="print the top N functions")
    parser.add_argument("--sort", default="cumulative", help="the profile's order (tottime)")
    parser.add_argument("--store", type=Path, default=STORE)
    parser.add_argument("--read", choices=["snippet"], help="read each hit's snippet, timed")
    args = parser.parse_args()
    queries = list(_data.queries("scifact", "test").values())
    with trove.open(args.store) as kb:
        # The in-memory indexes built now, in this thread: otherwise the word index is
        # built in the background from the second query (or its cache, if fresh), and
        # rounds run before it is ready are FTS5's, or share the GIL with the build.
        kb.warm()
        for text in queries:
            kb.search(text, mode=args.mode, limit=args.limit)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for text in queries:
                kb.search(text, mode=args.mode, limit=args.limit)
            profile.disable()
            pstats.Stats(profile).sort_stats(args.sort).print_stats(args.profile)
            return
        everything, cpu = [], []
        for round_ in range(args.rounds):
            latencies = []
            for text in queries:
                started, used = time.perf_counter(), time.thread_time()
                hits = kb.search(text, mode=args.mode, limit=args.limit)
                if args.read:
                    [hit.snippet for hit in hits]
                latencies.append((time.perf_counter() - started) * 1000)
                cpu.append((time.thread_time() - used) * 1000)
            everything += latencies
            print(
                f"round {round_ + 1}: p50 {_data.median(latencies):.2f} ms  "
                f"p95 {_data.percentile(latencies, 0.95):.2f} ms"
            )
    print(
        f"{args.mode} limit {args.limit}, {len(queries)} queries x {args.rounds}"
        f"{', snippets read' if args.read else ''}: "
        f"p50 {_data.median(everything):.2f} ms  p95 {_data.percentile(everything, 0.95):.2f} ms"
        f"  CPU p50 {_data.median(cpu):.2f} ms  (load {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
