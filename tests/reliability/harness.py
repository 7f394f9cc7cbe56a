"""Reliability harnesses shared by the tests (CI-sized) and bench/reliability.py (full size).

- :func:`fuzz`: hostile values into every library call; only TroveErrors, each call under
  a time bound.
- :func:`crash_rounds`: a child process killed with SIGKILL at a random moment during
  ``ingest --sync`` or a write loop with vectors; then :func:`trove.check.check`, every
  acknowledged write present, and the re-run converges.
- :func:`concurrency`: writers and readers in separate processes on one fresh file (the
  first vectors written by several at once); every acknowledged write present.
"""

from __future__ import annotations

import math
import random
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trove
from trove.backends.postgres.scheme import is_postgres
from trove.check import check
from trove.errors import TroveError

EMBEDDER = "hash:64"
HOSTILE: list[Any] = [
    "",
    " ",
    "\udcff",
    "a\udcffb",
    "\x00",
    "x" * 20_000,
    "中" * 5000,
    "a" * 9_000,
    5,
    -1,
    0,
    2**63,
    1e30,
    -1e30,
    math.nan,
    math.inf,
    True,
    None,
    [],
    [1],
    {},
    {1: 2},
    {"\x00": 1},
    {"k": math.nan},
    {"k": math.inf},
    {"\udcff": 1},
    b"bytes",
    object(),
    "2026-13-45",
    "1e30",
    "NaN",
    "kw" * 2,
    ("t", 5),
    {"k": {"k": {"k": {}}}},
]


def deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


_DEEP = deep(5000)
HOSTILE.append(_DEEP)
# Integers past SQLite's 64 bits and past a float's range, alone and as a metadata filter.
HUGE_INTS = [10**30, -(10**30), 2**63 - 1, -(2**63) - 1, 10**400, -(10**400)]
HOSTILE += HUGE_INTS + [{"k": n} for n in HUGE_INTS]
# Queries far past the length limit (up to megabytes), and within it the raw syntax at its
# most costly (each runs to the search's time budget in the seeded store); searched plain
# and raw. A 100 KB raw query once ran for minutes.
LONG_QUERIES = [
    "w OR " * 200_000 + "w",
    "a" * 1_000_000,
    "中" * 300_000,
    '"' + "x " * 60_000,
    "(" * 50_000 + "a" + ")" * 50_000,
    "w OR " * 1_999 + "w",
    '"' + "a b " * 2_400 + '"',
    "NEAR(" + "a " * 64 + ", 99999999999999999999)",
    " OR ".join(['"' + "a b " * 35 + '"'] * 64),
    " AND ".join(["(a OR b)"] * 32),
    " OR ".join(["a*"] * 64),
    "head:(" * 90 + "a" + ")" * 90,
]
ADD_FIELDS = [
    "text",
    "source",
    "source_id",
    "title",
    "author",
    "doc_type",
    "tags",
    "metadata",
    "timestamp",
    "importance",
    "namespace",
    "scope",
    "ttl",
    "participants",
    "dedupe_key",
    "url",
]
SEARCH_ARGS = [
    "mode",
    "limit",
    "expand",
    "source",
    "namespace",
    "doc_type",
    "author",
    "tags",
    "since",
    "until",
    "metadata",
    "raw",
    "session",
    "scope",
    "entities",
    "min_importance",
    "min_confidence",
    "max_compression",
    "min_score",
    "context",
    "max_tokens",
]
# The query itself, searched as plain words or as the raw syntax.
QUERY_ARGS = ["query", "raw_query"]


# No call may take longer (a search's own budget is 5 s: trove.search.bounds).
BOUND_S = 10.0


def call(kb: trove.Store, op: str, name: str, value: Any) -> None:
    """One library call with a hostile ``value`` in argument ``name`` (a name the call
    does not take stands for ``title`` or ``source``: an unknown keyword is Python's
    TypeError, not input)."""
    if op in ("add", "update") and name not in ADD_FIELDS:
        name = "title"
    if op == "search" and name not in [*SEARCH_ARGS, *QUERY_ARGS]:
        name = "source"
    if op == "add":
        kb.add(**{"text": "fuzz text", name: value})
    elif op == "update":
        doc = kb.add("fuzz base", source="fz", source_id="1")
        changeable = ("text", "title", "tags", "metadata", "importance", "ttl")
        kb.update(doc, **{name if name in changeable else "title": value})
    elif op == "search":
        if name in QUERY_ARGS:
            kb.search(value, raw=name == "raw_query")
        else:
            kb.search("fuzz", **{name: value})
    elif op == "link":
        a = kb.add("fuzz a", source="fz", source_id="a")
        b = kb.add("fuzz b", source="fz", source_id="b")
        kb.link(a, b, "relates_to", value)
    elif op == "list":
        kb.list(limit=value)
    else:
        kb.get(value)


def fuzz_call(kb: trove.Store, rng: random.Random, bound_s: float) -> tuple[str, str | None]:
    """One random hostile call: ("ok" | "trove" | "other" | "slow", what was called)."""
    op = rng.choice(["add", "search", "update", "link", "list", "get"])
    name = rng.choice(ADD_FIELDS if op in ("add", "update") else [*SEARCH_ARGS, *QUERY_ARGS])
    queries = LONG_QUERIES if op == "search" and name in QUERY_ARGS else []
    value = rng.choice(HOSTILE + queries)
    shown = "<5,000-deep dict>" if value is _DEEP else _shown(value)
    what = f"{op}({name}={shown})"
    start = time.monotonic()
    try:
        call(kb, op, name, value)
        outcome = "ok"
    except TroveError:
        outcome = "trove"
    except Exception as exc:
        outcome, what = "other", f"{what}: {type(exc).__name__}: {exc!s:.80}"
    if time.monotonic() - start > bound_s:
        return "slow", what
    return outcome, what if outcome == "other" else None


SEED_DOCUMENTS = 500


def seed_store(kb: trove.Store, documents: int = SEED_DOCUMENTS) -> None:
    """Documents that every word of :data:`LONG_QUERIES` finds, many times each: the raw
    queries do their most work (in an empty store they do none)."""
    text = "a b c w x head text " * 40
    kb.add_many(
        [{"text": text + str(i), "source": "seed", "source_id": str(i)} for i in range(documents)]
    )


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) > 60:
        return f"{value[:40]!r}... ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**40:
        return f"{'-' if value < 0 else ''}<{len(str(abs(value)))}-digit int>"
    return repr(value)[:60]


def fuzz(target: str, cases: int, seed: int = 0, bound_s: float = BOUND_S) -> dict[str, Any]:
    rng = random.Random(seed)
    counts = {"ok": 0, "trove": 0, "other": 0, "slow": 0}
    examples: list[str] = []
    with trove.open(target, embedder=EMBEDDER) as kb:
        seed_store(kb)
        slowest = 0.0
        for _ in range(cases):
            start = time.monotonic()
            outcome, what = fuzz_call(kb, rng, bound_s)
            slowest = max(slowest, time.monotonic() - start)
            counts[outcome] += 1
            if what and len(examples) < 10:
                examples.append(what)
    return {"cases": cases, **counts, "slowest_s": round(slowest, 2), "examples": examples}


_WRITER = """
import sys, trove
db, prefix, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
with trove.open(db, embedder="hash:64") as kb:
    i = start
    while True:
        kb.add(f"{prefix} note {i} " + "words of text " * (i % 40), source=prefix,
               source_id=str(i), metadata={"i": i})
        print(i, flush=True)
        i += 1
"""


def make_folder(root: Path, files: int, seed: int) -> Path:
    rng = random.Random(seed)
    folder = root / "notes"
    folder.mkdir(exist_ok=True)
    for i in range(files):
        words = " ".join(
            rng.choice(["alpha", "beta", "gamma", "delta", "redis", "cache"])
            for _ in range(rng.randint(5, 900))
        )
        (folder / f"n{i:04d}.md").write_text(f"# Note {i}\n\n{words}\n", encoding="utf-8")
    return folder


def churn(folder: Path, rng: random.Random) -> None:
    """Give the next ``ingest --sync`` work to be killed in: rewrite, remove and add notes."""
    notes = sorted(folder.glob("*.md"))
    for path in rng.sample(notes, min(100, len(notes))):
        words = " ".join(rng.choice(["alpha", "beta", "redis", "cache"]) for _ in range(3000))
        path.write_text(f"# {path.stem}\n\n{words} {rng.random()}\n", encoding="utf-8")
    for path in rng.sample(notes, min(5, len(notes))):
        path.unlink()
    for _ in range(5):
        (folder / f"x{rng.randrange(10**9)}.md").write_text(f"new {rng.random()}\n", "utf-8")


# The `trove` command, run by this interpreter (the package has no __main__).
_CLI = "import sys; from trove.interfaces.cli import cli; cli(sys.argv[1:], prog_name='trove')"


def _wait_for_writes(child: subprocess.Popen[bytes], db: Path | str, limit_s: float = 20) -> None:
    """Until the child's first write reaches the store's write-ahead log (or it exits):
    a SQLite file's ``-wal`` file, or a PostgreSQL server's WAL insert position."""
    position = _wal_position(db)
    before = position()
    end = time.monotonic() + limit_s
    while child.poll() is None and time.monotonic() < end:
        if position() != before:
            return
        time.sleep(0.005)


def _wal_position(db: Path | str) -> Callable[[], object]:
    if not is_postgres(str(db)):
        wal = Path(f"{db}-wal")
        return lambda: wal.stat().st_mtime_ns if wal.exists() else 0
    import psycopg

    from trove.backends.postgres.url import parse

    conninfo = parse(str(db)).conninfo

    def lsn() -> object:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            return conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()

    return lsn


def _acked(out: bytes) -> list[int]:
    lines = out.decode(errors="replace").splitlines()
    return [int(x) for x in lines[:-1] if x.strip().isdigit()]  # the last may be cut short


def crash_round(db: Path | str, folder: Path, kind: str, rng: random.Random) -> dict[str, Any]:
    """One kill; returns the problems found and how many acknowledged writes were lost."""
    if kind == "ingest":
        churn(folder, rng)
        args = [
            "-c",
            _CLI,
            "--db",
            str(db),
            "--embedder",
            EMBEDDER,
            "ingest",
            str(folder),
            "--sync",
        ]
    else:
        args = ["-c", _WRITER, str(db), "w", str(rng.randint(0, 10**6))]
    child = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    # Kill once it writes (a loaded machine takes seconds to start an interpreter); an
    # ingest with little to do ends soon after. A write loop has written once it says
    # so; a server's WAL also moves for reasons of its own (autovacuum, checkpoints).
    if kind == "write" and child.stdout is not None:
        select.select([child.stdout], [], [], 20)
    else:
        _wait_for_writes(child, db)
    time.sleep(rng.uniform(0.0, 0.5) if kind == "ingest" else rng.uniform(0.0, 1.0))
    running = child.poll() is None  # an ingest may have finished before its kill
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    acked = _acked(out) if kind == "write" else []
    with trove.open(db, embedder=EMBEDDER) as kb:
        report = check(kb)
        lost = [i for i in acked if kb.get(_doc_id(kb, "w", i)) is None]
        problems = list(report.problems)
        if kind == "ingest":
            kb.ingest(folder, sync=True)
            again = kb.ingest(folder, sync=True)
            if again.added or again.updated:
                problems.append(f"re-run did not converge: {again}")
            problems += check(kb).problems
    return {"problems": problems, "acked": len(acked), "lost": len(lost), "running": running}


def _doc_id(kb: trove.Store, source: str, i: int) -> str:
    from trove.ids import document_id

    return document_id("default", "workspace", source, str(i), None, "", None)


def crash_rounds(
    root: Path, kills: int, seed: int = 0, target: str | None = None
) -> dict[str, Any]:
    """``kills`` rounds, ingests and write loops in turn, each on a store of its kind
    under ``root``, or all on ``target`` (a PostgreSQL store)."""
    rng = random.Random(seed)
    folder = make_folder(root, 150, seed)
    totals = {"kills": 0, "mid_run": 0, "corrupt": 0, "half_written": 0, "acked": 0, "lost": 0}
    examples: list[str] = []
    for n in range(kills):
        kind = "ingest" if n % 2 == 0 else "write"
        result = crash_round(target or root / f"{kind}.db", folder, kind, rng)
        totals["kills"] += 1
        totals["mid_run"] += result["running"]
        totals["acked"] += result["acked"]
        totals["lost"] += result["lost"]
        problems = result["problems"]
        totals["corrupt"] += any(p.startswith(("sqlite", "chunk_")) for p in problems)
        totals["half_written"] += any(not p.startswith(("sqlite", "chunk_")) for p in problems)
        examples += problems[:2]
    return {**totals, "examples": examples[:10]}


_WORKER = """
import sys, time, trove
db, role, n, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
end = time.monotonic() + seconds
errors = 0
with trove.open(db, embedder="hash:64") as kb:
    i = 0
    while time.monotonic() < end:
        try:
            if role == "writer":
                kb.add(f"process {n} note {i} about caches", source=f"p{n}", source_id=str(i))
                print(i, flush=True)
                i += 1
            else:
                kb.search("caches note", limit=5)
                kb.search("caches", mode="keyword", limit=5)
        except Exception as exc:
            errors += 1
            print("error", type(exc).__name__, exc, file=sys.stderr, flush=True)
print("errors", errors, file=sys.stderr, flush=True)
"""


def concurrency(db: Path | str, processes: int, seconds: float) -> dict[str, Any]:
    """``processes`` (half writers, half readers) on one fresh store for ``seconds``."""
    roles = ["writer" if n % 2 == 0 else "reader" for n in range(processes)]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(db), role, str(n), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n, role in enumerate(roles)
    ]
    acked: dict[int, list[int]] = {}
    errors, messages = 0, []
    for n, child in enumerate(children):
        out, err = child.communicate(timeout=seconds + 120)
        if roles[n] == "writer":
            acked[n] = [int(x) for x in out.decode().split()]
        for line in err.decode(errors="replace").splitlines():
            if line.startswith("errors "):
                errors += int(line.split()[1])
            elif line.startswith("error") and len(messages) < 5:
                messages.append(line)
        errors += child.returncode != 0
    with trove.open(db, embedder=EMBEDDER) as kb:
        lost = sum(
            kb.get(_doc_id(kb, f"p{n}", i)) is None for n, ids in acked.items() for i in ids
        )
        report = check(kb)
        tables = _vector_tables(kb, str(db))
    return {
        "processes": processes,
        "seconds": seconds,
        "writes": sum(map(len, acked.values())),
        "errors": errors,
        "lost": lost,
        "vector_tables": tables,
        "problems": report.problems,
        "messages": messages,
    }


def _vector_tables(kb: trove.Store, db: str) -> int:
    if is_postgres(db):
        return int(
            kb.backend.rows(  # type: ignore[attr-defined]
                "SELECT count(*) FROM pg_tables WHERE schemaname = %s "
                "AND tablename ~ '^chunk_vec_[0-9]+$'",
                (kb.backend.schema,),  # type: ignore[attr-defined]
            )[0][0]
        )
    return int(
        kb.backend.conn.execute(  # type: ignore[attr-defined]
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
            "AND name GLOB 'chunk_vec_[0-9]*' AND name NOT GLOB 'chunk_vec_[0-9]*_*'"
        )[0][0]
    )


def isolation(target: str, checks: int = 100_000, **options: Any) -> dict[str, Any]:
    """Randomized namespace and session isolation through the library, HTTP (every JSON
    route), MCP over streamable HTTP and MCP over stdio (tools, resources, prompts,
    notifications), until ``checks`` checks are made (tests/helpers/isolation_run.py)."""
    from helpers.isolation_run import run  # tests/ is on sys.path (pytest; bench adds it)

    return run(target, checks, **options)


_FILLER = """
import resource, sys, trove
db, limit = sys.argv[1], int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
import signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
with trove.open(db, embedder="hash:64") as kb:
    i = 0
    try:
        while True:
            kb.add(f"filler {i} " + "lorem ipsum " * 400, source="f", source_id=str(i))
            print(i, flush=True)
            i += 1
    except trove.TroveError as exc:
        print("refused", type(exc).__name__, file=sys.stderr)
    except Exception as exc:
        print("raised", type(exc).__name__, exc, file=sys.stderr)
"""


def disk_full(db: Path, limit_bytes: int = 3_000_000) -> dict[str, Any]:
    """A child writes until the file size limit (RLIMIT_FSIZE) stops it; then the store
    must open, hold every acknowledged write and pass its checks."""
    child = subprocess.run(
        [sys.executable, "-c", _FILLER, str(db), str(limit_bytes)],
        capture_output=True,
        timeout=300,
    )
    acked = [int(x) for x in child.stdout.decode().split()]
    stderr = child.stderr.decode(errors="replace").strip().splitlines()
    with trove.open(db, embedder=EMBEDDER) as kb:
        lost = sum(kb.get(_doc_id(kb, "f", i)) is None for i in acked)
        report = check(kb)
        searchable = bool(kb.search("lorem", mode="keyword"))
    return {
        "acked": len(acked),
        "lost": lost,
        "problems": report.problems,
        "searchable": searchable,
        "how_it_ended": stderr[-1] if stderr else "",
        "exit": child.returncode,
    }


def read_only(db: Path) -> dict[str, Any]:
    """A store file of mode 0444 opens and answers searches."""
    with trove.open(db, embedder=EMBEDDER) as kb:
        kb.add("read only probe text", source="ro", source_id="1")
    db.chmod(0o444)
    try:
        with trove.open(db, embedder=EMBEDDER) as kb:
            found = len(kb.search("probe", mode="keyword"))
            try:
                kb.add("must fail", source="ro", source_id="2")
                write = "accepted"
            except TroveError as exc:
                write = type(exc).__name__
            except Exception as exc:
                write = f"{type(exc).__name__} (not a TroveError)"
    finally:
        db.chmod(0o600)
    return {"found": found, "write": write}
