"""Two checkouts side by side, each on its own store: cold start and warm latency, alternated.

    python bench/versions.py --a OLD/bin/python OLD.db --b NEW/bin/python NEW.db --rounds 9

``bench/coldstart.py --baseline`` runs both environments on one store; that needs both to
open it. When the schema changed between the two (a newer trove migrates the file, an
older one refuses it), each side gets its own store of the same content instead: build
each with its own checkout (``coldstart.build``, same seed, so the same documents).

Each round runs every cold command once per side (a fresh process, exec to exit, as in
bench/coldstart.py: ``trove stats``, the first keyword and the first hybrid search, limit
10), then one warm process per side: it opens the store, ``warm()``s it and times
``--queries`` SciFact test claims per mode (the first 5 not counted); its p50 per mode is
one sample. A round before the counted ones is not counted (a store's first open after
its build costs more). The cold commands run without the index caches beside the stores,
so every cold sample is a first query with nothing cached, as bench/coldstart.py's
"fresh" figures; the warm processes have them (the first one saves them; they are kept
aside while the cold commands run), as a server that restarts finds them. Who goes first
alternates by round, so that a load that changes during the run weighs on both alike.
Prints the median of the rounds per side and the ratio B / A, with the load (1-minute
average) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path

import _data
import coldstart

COLD = ("stats_s", "keyword_s", "hybrid_s")
# Each side's python imports its own checkout: a PYTHONPATH given to run this script (to
# its checkout's src) must not reach the other side's processes, which would then run this
# checkout's trove and migrate the other store's schema.
_ENV = {k: v for k, v in coldstart._ENV.items() if k != "PYTHONPATH"}

# Opens the store, warms it as a server does, times each mode: one JSON line of p50s.
_WARM = """
import json, statistics, sys, time, trove
queries = json.loads(sys.argv[2])
with trove.open(sys.argv[1]) as kb:
    kb.warm()
    result = {}
    for mode in ("keyword", "semantic", "hybrid"):
        times = []
        for q in queries:
            began = time.perf_counter()
            kb.search(q, mode=mode, limit=10)
            times.append((time.perf_counter() - began) * 1000)
        result[f"warm_{mode}_ms"] = statistics.median(times[5:])
print(json.dumps(result))
"""


def warm(python: Path, store: Path, queries: list[str]) -> dict[str, float]:
    out = subprocess.run(
        [str(python), "-c", _WARM, str(store), json.dumps(queries)],
        check=True,
        capture_output=True,
        text=True,
        env=_ENV,
    ).stdout
    return dict(json.loads(out.splitlines()[-1]))


def imports(python: Path) -> str:
    """Where ``python`` finds trove, as the measured processes will."""
    argv = [str(python), "-c", "import trove; print(trove.__file__)"]
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=_ENV).stdout


def _caches(store: Path, aside: bool) -> None:
    """Move the store's index caches aside (a cold start has none) or back in place."""
    cache = coldstart.cache_dir(store)
    kept = cache.with_name(cache.name + "-aside")
    source, target = (cache, kept) if aside else (kept, cache)
    if source.exists():
        shutil.rmtree(target, ignore_errors=True)
        source.rename(target)


def run(sides: list[tuple[Path, Path]], rounds: int, count: int) -> list[dict[str, list[float]]]:
    """Samples per side: each cold command's wall and CPU seconds, each warm p50."""
    claims = list(_data.queries("scifact", "test").values())
    samples: list[dict[str, list[float]]] = [{} for _ in sides]
    for r in range(rounds + 1):  # round 0: not counted
        into = samples if r else [{} for _ in sides]
        for _, store in sides:
            _caches(store, aside=True)
        order = list(range(len(sides)))
        if r % 2 == 0:
            order.reverse()
        for name in COLD:
            for i in order:
                python, store = sides[i]
                argv = coldstart.commands(store, claims[r % len(claims)], python.parent)[name]
                wall, cpu = coldstart.timed_cpu(argv, _ENV)
                into[i].setdefault(name, []).append(wall)
                into[i].setdefault(name.removesuffix("_s") + "_cpu_s", []).append(cpu)
        start = (r * count) % len(claims)
        for i in order:
            python, store = sides[i]
            _caches(store, aside=False)
            for key, value in warm(python, store, claims[start : start + count]).items():
                into[i].setdefault(key, []).append(value)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", nargs=2, metavar=("PYTHON", "STORE"), required=True)
    parser.add_argument("--b", nargs=2, metavar=("PYTHON", "STORE"), required=True)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--queries", type=int, default=60, help="per warm process and mode")
    args = parser.parse_args()
    sides = [(Path(p), Path(s)) for p, s in (args.a, args.b)]
    for _, store in sides:  # caches an earlier run left: the first warm process saves new
        for stale in (coldstart.cache_dir(store), Path(f"{coldstart.cache_dir(store)}-aside")):
            shutil.rmtree(stale, ignore_errors=True)
    for name, (python, store) in zip("AB", sides, strict=True):
        print(f"{name}: {store} with trove from {imports(python).strip()}", flush=True)
    load_before = os.getloadavg()[0]
    a, b = run(sides, args.rounds, args.queries)
    print(f"{_data.machine()}; load {load_before:.1f}-{os.getloadavg()[0]:.1f}")
    print(f"{'figure':<18} {'A median':>9} {'B median':>9} {'B / A':>6}   A range, B range")
    for key in a:
        mid_a, mid_b = statistics.median(a[key]), statistics.median(b[key])
        print(
            f"{key:<18} {mid_a:>9.3f} {mid_b:>9.3f} {mid_b / mid_a:>6.3f}   "
            f"{min(a[key]):.3f}-{max(a[key]):.3f}, {min(b[key]):.3f}-{max(b[key]):.3f}"
        )


if __name__ == "__main__":
    main()
