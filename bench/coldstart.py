"""Cold start: what a fresh process pays before its first answer, and bulk-write speed.

    python bench/coldstart.py                     # 100k chunks, hash:384 embedder
    python bench/coldstart.py --sizes 10000 100000 --repeat 5
    python bench/coldstart.py --report            # only rewrite docs/benchmarks.md
    python bench/coldstart.py --commands stats_s help_s --repeat 9   # some commands only
    python bench/coldstart.py --store bench/.cache/scale-copy.db       # an existing store

With another environment's python (``/work/main/.venv/bin/python bench/coldstart.py``)
the commands run from that environment. ``--baseline OTHER/bin/python`` measures both
environments in one run, alternating command by command, so that a load that changes
during the run weighs on both alike: an A/B on a shared machine.

A CLI command, an MCP stdio server per agent session, a cron job: each is a new process,
so what counts is the wall time from exec to answer. Each figure here is the median of
``--repeat`` runs of a fresh ``python`` process (the file in the page cache, as on a
machine that used the store recently): ``import trove``, ``trove --help``, ``trove stats``
and ``trove search`` in each mode, and for comparison sqlite-vec's exact k-NN on the same
vectors in a bare process (apsw + sqlite-vec, no trove).

The store (bench/.cache/coldstart-N.db) holds N one-chunk documents of 2-6 SciFact
sentences each, embedded by the ``hash:384`` embedder so that no model costs time; it is
built with ``add_many`` and the build's rate is reported (``--rebuild`` builds it again).
Queries are SciFact test claims, a different one each run.

The machine is shared: the load average (``os.getloadavg``) is recorded with each row,
and beside each wall-time median the median CPU time (user + system) of the same runs
(``*_cpu_s``), which grows less than wall time when other processes compete for the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _data
import _report

CACHE = Path(__file__).resolve().parent / ".cache"
RESULTS = Path(__file__).resolve().parent / "results" / "coldstart.json"
EMBEDDER = "hash:384"
SEED = 20261201
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_BIN = Path(sys.executable).parent
# A user's python caches compiled modules in __pycache__. With PYTHONDONTWRITEBYTECODE set
# (some shells and CI set it) every run would compile trove's sources again (about a third
# of `trove stats`), and an A/B against a checkout whose caches exist would be unfair: the
# commands run without it.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# A bare process answering one exact k-NN with sqlite-vec (no trove): the floor to beat.
_SQLITE_VEC = """
import sys, time, apsw, sqlite_vec, json
from trove.embedders.hashing import HashEmbedder
conn = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
conn.enable_load_extension(True); conn.load_extension(sqlite_vec.loadable_path())
lock = json.loads(conn.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()[0])
q = HashEmbedder(lock["dimension"]).embed([sys.argv[2]])[0]
rows = list(conn.execute(
    f"SELECT rowid, distance FROM {lock['table']} WHERE embedding MATCH ? AND k = 10",
    (q.tobytes(),)))
assert len(rows) == 10, rows
"""


def build(path: Path, n: int) -> dict[str, float]:
    """A store of ``n`` one-chunk documents; returns the write rate of add_many."""
    import trove

    sentences = [
        s
        for d in _data.corpus("scifact")
        for s in _SENTENCE.split(d["text"])
        if 20 <= len(s) <= 250
    ]
    rng = random.Random(SEED)
    for stale in path.parent.glob(path.name + "*"):
        if stale.is_file():
            stale.unlink()
    began = time.perf_counter()
    with trove.open(path, embedder=EMBEDDER) as kb:
        batch = 10_000
        for start in range(0, n, batch):
            docs = [
                {
                    "text": " ".join(rng.sample(sentences, rng.randint(2, 6))),
                    "title": f"doc {i}",
                    "source": "coldstart",
                    "source_id": str(i),
                }
                for i in range(start, min(n, start + batch))
            ]
            kb.add_many(docs, batch_size=1_000)
            print(f"  {start + len(docs):,} documents", file=sys.stderr)
    seconds = time.perf_counter() - began
    return {"build_s": seconds, "build_docs_per_s": n / seconds}


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    return timed_cpu(argv, env)[0]


def timed_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env or _ENV)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def commands(path: Path, query: str, bin: Path = _BIN) -> dict[str, list[str]]:
    python, cli = str(bin / "python"), str(bin / "trove")
    search = [cli, "--db", str(path), "search", query, "--limit", "10", "--mode"]
    return {
        "import_s": [python, "-c", "import trove"],
        "help_s": [cli, "--help"],
        "stats_s": [cli, "--db", str(path), "stats"],
        "keyword_s": [*search, "keyword"],
        "semantic_s": [*search, "semantic"],
        "hybrid_s": [*search, "hybrid"],
        "sqlite_vec_s": [python, "-c", _SQLITE_VEC, str(path), query],
    }


# A process that opens the store, warms it (as a server does) and answers queries, then
# reports its proportional set size: shared pages count a share to each process.
_SERVE = """
import json, statistics, sys, time, trove
queries = json.loads(sys.argv[2])
with trove.open(sys.argv[1]) as kb:
    began = time.perf_counter()
    kb.warm()
    result = {"warm_s": time.perf_counter() - began}
    for mode in ("keyword", "semantic", "hybrid"):
        times = []
        for q in queries:
            began = time.perf_counter()
            kb.search(q, mode=mode, limit=10)
            times.append((time.perf_counter() - began) * 1000)
        result[f"warm_{mode}_p50_ms"] = statistics.median(times[5:])
    print(json.dumps(result), flush=True)
    sys.stdin.readline()
"""


def measure(
    path: Path, repeat: int, skip: tuple[str, ...] = (), bins: tuple[Path, ...] = (_BIN,)
) -> list[dict[str, float]]:
    """Median wall and CPU seconds of each command, one row per environment in ``bins``;
    the environments take turns command by command."""
    queries = list(_data.queries("scifact", "test").values())
    runs: list[dict[str, list[float]]] = [{} for _ in bins]
    load_before = os.getloadavg()[0]
    for r in range(repeat):
        for name in commands(path, ""):
            if name in skip:
                continue
            turns = list(zip(bins, runs, strict=True))
            for bin, into in turns if r % 2 == 0 else reversed(turns):  # who goes first: each
                wall, cpu = timed_cpu(commands(path, queries[r % len(queries)], bin)[name])
                into.setdefault(name, []).append(wall)
                into.setdefault(name.removesuffix("_s") + "_cpu_s", []).append(cpu)
    load = {"load_before": load_before, "load_after": os.getloadavg()[0]}
    return [{**{k: statistics.median(v) for k, v in one.items()}, **load} for one in runs]


def chunks(path: Path) -> int:
    """How many chunks an existing store holds (its stats, read by this environment's trove)."""
    out = subprocess.run(
        [str(_BIN / "trove"), "--db", str(path), "stats", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(json.loads(out)["chunks"])


def cache_dir(path: Path) -> Path:
    return Path(f"{path}.trove-index")


def shared(path: Path, processes: int) -> dict[str, float]:
    """Total PSS and RSS (MB) of ``processes`` warm processes serving the store, started
    one after another; and the first one's warm-up time and warm query latencies."""
    python = str(_BIN / "python")
    queries = json.dumps(list(_data.queries("scifact", "test").values())[:60])
    runs, served = [], []
    for _ in range(processes):
        run = subprocess.Popen(
            [python, "-c", _SERVE, str(path), queries],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert run.stdout is not None
        served.append(json.loads(run.stdout.readline()))
        runs.append(run)
    pss = rss = 0.0
    for run in runs:
        for line in Path(f"/proc/{run.pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1]) / 1024
            elif line.startswith("Rss:"):
                rss += int(line.split()[1]) / 1024
    for run in runs:
        run.communicate("\n")
    first = {f"serve_{k}": v for k, v in served[0].items()}
    return {"processes": processes, "pss_total_mb": pss, "rss_total_mb": rss, **first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true", help="build the stores again")
    parser.add_argument("--label", default="", help="a name for this run (e.g. baseline)")
    parser.add_argument(
        "--cached", action="store_true", help="also measure with the index cache in place"
    )
    parser.add_argument(
        "--shared", type=int, default=0, metavar="N", help="total PSS of N serving processes"
    )
    parser.add_argument(
        "--commands", nargs="+", metavar="NAME", help="only these (e.g. stats_s keyword_s)"
    )
    parser.add_argument(
        "--store",
        type=Path,
        help="measure this existing store instead of coldstart-N.db (use a copy: its index "
        "cache folder is deleted first)",
    )
    parser.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="also run each command from this environment (another checkout's venv python), "
        "alternating with this one",
    )
    parser.add_argument("--baseline-label", default="baseline", help="its rows' name")
    parser.add_argument("--report", action="store_true", help="only rewrite the docs")
    args = parser.parse_args()
    if args.report:
        _report.write()
        return
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    CACHE.mkdir(exist_ok=True)
    stores = (
        [(args.store, 0)] if args.store else [(CACHE / f"coldstart-{n}.db", n) for n in args.sizes]
    )
    for path, n in stores:
        row: dict[str, object] = {"chunks": n or chunks(path), "label": args.label}
        if args.store:
            row["store"] = path.name
        elif args.rebuild or not path.exists():
            row.update(build(path, n))
        if cache_dir(path).exists():
            shutil.rmtree(cache_dir(path))
        every = commands(path, "")
        skip = tuple(c for c in every if args.commands and c not in args.commands)
        bins = (Path(args.baseline).parent, _BIN) if args.baseline else (_BIN,)
        *before, after = measure(path, args.repeat, skip, bins)
        row.update(after)
        if before:
            base = {**row, **before[0], "label": args.baseline_label, "python": args.baseline}
            results["runs"].append(base)
            print(json.dumps(base))
        if args.cached:  # a store that a server or `Store.warm()` has opened before
            warm = [str(_BIN / "python"), "-c", f"import trove; trove.open({str(path)!r}).warm()"]
            row["warm_s"] = timed(warm)
            cached = measure(path, args.repeat, skip=("import_s", "help_s", "sqlite_vec_s"))[0]
            row.update({f"cached_{k}": v for k, v in cached.items()})
        if args.shared:
            row.update(shared(path, args.shared))
        row.update(machine=_data.machine(), date=time.strftime("%Y-%m-%d %H:%M"))
        print(json.dumps(row))
        results["runs"].append(row)
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    _report.write()


if __name__ == "__main__":
    main()
