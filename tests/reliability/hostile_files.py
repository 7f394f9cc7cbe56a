"""Hostile files for the importers and ``trove ingest``, and an export/import round trip
while another process writes (shared by tests/reliability and bench/reliability.py).

Each case is a file or folder an attacker or a careless user could hand over, run through
the CLI in a child process under a time bound: it must end within the bound, with a clear
message and no traceback, and store only what it should (nothing from outside an export
folder; the good files of a folder that also holds a bad one).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trove

EMBEDDER = "hash:64"
DEEP = 200_000  # deeper than Python's recursion limit, many times over
SECRET = "outside the export folder"


@dataclass
class Case:
    name: str
    args: list[str]  # trove's arguments after --db
    ok: bool  # whether the command should succeed
    stored: Callable[[trove.Store], bool] = lambda kb: True  # what must hold afterwards


def _deep_json() -> str:
    return "[" * DEEP + "]" * DEEP


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _nothing_from_outside(kb: trove.Store) -> bool:
    return not kb.search(SECRET, mode="keyword")


def _slack(root: Path, name: str, channel: str) -> Path:
    """A Slack export whose channels.json names ``channel``; a folder with a message
    lies outside the export, where a traversal would find it."""
    folder = root / name / "export"
    outside = root / name / "outside"
    _write(outside / "2026-01-01.json", json.dumps([{"ts": "1.0", "text": SECRET}]))
    _write(folder / "users.json", "[]")
    _write(folder / "channels.json", json.dumps([{"id": "C1", "name": channel}]))
    return folder


def _cycle() -> str:
    mapping = {
        "a": {"id": "a", "parent": None, "children": ["b"], "message": None},
        "b": {"id": "b", "parent": "a", "children": ["a"], "message": None},
    }
    return json.dumps([{"id": "c1", "title": "loop", "mapping": mapping}])


def _zip(path: Path, member_bytes: int) -> Path:
    """A ZIP whose one member unpacks to ``member_bytes`` of zeros (a small bomb)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    block = b"\0" * (1 << 20)
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("conversations.json", "w", force_zip64=True) as member,
    ):
        for _ in range(member_bytes // len(block)):
            member.write(block)
    return path


def cases(root: Path, bomb_bytes: int = 64 << 20) -> list[Case]:
    """Every importer (and ingest) with hostile inputs: cycles, traversal, deep nesting,
    archives and bombs, bytes that are not text."""
    deep = _deep_json()
    bomb = _zip(root / "bomb.zip", bomb_bytes)
    header = json.dumps({"kind": "header", "format": "trove-export", "version": 1})
    found = [
        Case(
            "chatgpt: a cycle of children",
            ["import", "--from", "chatgpt", str(_write(root / "cycle.json", _cycle()))],
            ok=True,
        ),
        Case(
            "slack: channel ../outside",
            ["import", str(_slack(root, "rel", "../outside"))],
            ok=False,
            stored=_nothing_from_outside,
        ),
        Case(
            "slack: an absolute channel path",
            ["import", str(_slack(root, "abs", str(root / "abs" / "outside")))],
            ok=False,
            stored=_nothing_from_outside,
        ),
        Case("zip without --from", ["import", str(bomb)], ok=False),
        Case("ingest: a folder with a zip bomb", ["ingest", str(bomb.parent / "zipped")], ok=True),
        Case(
            "trove: not UTF-8",
            [
                "import",
                "--from",
                "trove",
                str(_write(root / "binary.jsonl", header.encode() + b"\n\xff\xfe\x00{")),
            ],
            ok=False,
        ),
    ]
    (bomb.parent / "zipped").mkdir()
    (bomb.parent / "zipped" / "bomb.zip").write_bytes(bomb.read_bytes())
    for kind in ("chatgpt", "claude", "mcp-memory", "trove"):
        found.append(Case(f"{kind}: a zip bomb", ["import", "--from", kind, str(bomb)], ok=False))
    for kind in ("chatgpt", "claude", "auto"):
        path = _write(root / f"deep-{kind}.json", deep)
        found.append(
            Case(
                f"{kind}: JSON nested {DEEP:,} deep",
                ["import", "--from", kind, str(path)],
                ok=False,
            )
        )
    found.append(
        Case(
            "mcp-memory: a line nested deep",
            ["import", "--from", "mcp-memory", str(_write(root / "deep-memory.jsonl", deep))],
            ok=False,
        )
    )
    found.append(
        Case(
            "trove: a line nested deep",
            [
                "import",
                "--from",
                "trove",
                str(_write(root / "deep-export.jsonl", f"{header}\n{deep}\n")),
            ],
            ok=False,
        )
    )
    slack = _slack(root, "deep-slack", "general")
    _write(slack / "channels.json", deep)
    found.append(Case("slack: channels.json nested deep", ["import", str(slack)], ok=False))
    folder = root / "mixed"
    _write(folder / "deep.jsonl", deep + "\n")
    _write(folder / "good.md", "# Good\n\nThe good note about lighthouses.")
    found.append(
        Case(
            "ingest: a folder with a deeply nested .jsonl",
            ["ingest", str(folder)],
            ok=False,
            stored=lambda kb: bool(kb.search("lighthouses", mode="keyword")),
        )
    )
    return found


def run_case(case: Case, db: Path, bound_s: float) -> str | None:
    """Why ``case`` failed, or None."""
    command = [sys.executable, "-m", "trove", "--db", str(db), "--embedder", EMBEDDER, *case.args]
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=bound_s)
    except subprocess.TimeoutExpired:
        return f"ran past {bound_s:g} s"
    took = time.monotonic() - start
    if "Traceback" in done.stderr:
        return f"a traceback: {done.stderr.strip().splitlines()[-1]}"
    if (done.returncode == 0) != case.ok:
        return f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[:200]}"
    if not case.ok and not done.stderr.strip():
        return "failed without saying why"
    with trove.open(db, embedder=EMBEDDER) as kb:
        if not case.stored(kb):
            return "stored what it should not (or lost what it should keep)"
    return None if took <= bound_s else f"took {took:.1f} s"


def hostile_imports(
    root: Path, bound_s: float = 60.0, bomb_bytes: int = 64 << 20
) -> dict[str, Any]:
    """Run every case on a fresh store; counts and the failures."""
    failures = []
    found = cases(root, bomb_bytes)
    for n, case in enumerate(found):
        why = run_case(case, root / f"case-{n}.db", bound_s)
        if why is not None:
            failures.append(f"{case.name}: {why}")
    return {"cases": len(found), "failing": len(failures), "failures": failures}


WRITER = """
import sys, trove
docs = int(sys.argv[2])
def text(i, long):
    return "\\n\\n".join(f"Note {i} paragraph {p} about parks." for p in range(60 if long else 1))
with trove.open(sys.argv[1], embedder="hash:64") as kb:
    long = False
    while True:
        for start in range(0, docs, 15):
            kb.write_many([{"text": text(i, long), "source": "s", "source_id": str(i)}
                           for i in range(start, min(start + 15, docs))])
            print("wrote", flush=True)
        long = not long
"""


def round_trip_under_writes(root: Path, rounds: int, docs: int = 450) -> dict[str, Any]:
    """Export ``rounds`` times while another process rewrites every document (long text,
    then short); each file must import cleanly into a fresh store, every document with
    chunks that end where its text ends."""
    from trove.transfer.jsonl import export_jsonl, import_jsonl

    target = root / "live.db"
    with trove.open(target, embedder=EMBEDDER) as kb:
        kb.write_many(
            [
                {"text": f"Note {i} about parks.", "source": "s", "source_id": str(i)}
                for i in range(docs)
            ]
        )
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(docs)], stdout=subprocess.PIPE
    )
    failures: list[str] = []
    try:
        assert writer.stdout is not None
        writer.stdout.readline()
        with trove.open(target, embedder=EMBEDDER) as kb:
            exports = []
            for _ in range(rounds):
                out = io.StringIO()
                export_jsonl(kb, out)
                exports.append(out.getvalue())
    finally:
        writer.kill()
        writer.wait()
    for n, text in enumerate(exports):
        try:
            with trove.open(root / f"copy-{n}.db", embedder=EMBEDDER) as kb:
                added = import_jsonl(kb, io.StringIO(text)).added
            if added != docs:
                failures.append(f"round {n}: {added} of {docs} imported")
        except trove.TroveError as exc:
            failures.append(f"round {n}: {exc}")
    return {"rounds": rounds, "documents": docs, "failing": len(failures), "failures": failures}


ODD_NAMES = [
    "",
    "a\r\nb.txt",
    "../../etc/passwd",
    "/abs/x.pdf",
    "x\x00y.txt",
    "中文.pdf",
    '"q".txt',
    "\u202etxt.exe",
    ".hidden",
    "a\\b.txt",
    " ",
    "x" * 400 + ".txt",
]
ODD_TYPES = [
    "",
    "text/plain",
    "text/h中ml",
    "text/plain\x00",
    "text/html\r\nSet-Cookie: x",
    "text",
    "/",
    'a/b; q="x y"',
    "image/svg+xml",
    "x" * 300 + "/y",
    "text/plain;",
]


def odd_originals(target: str, cases: int, seed: int = 0) -> dict[str, Any]:
    """Originals with odd file names and media types: each is refused with a TroveError
    or stored, and what is stored makes download headers that are valid to send."""
    import random

    from trove.interfaces.downloads import headers, media_type

    rng = random.Random(seed)
    counts = {"cases": cases, "stored": 0, "refused": 0, "other": 0, "bad_headers": 0}
    examples: list[str] = []
    with trove.open(target, embedder=None) as kb:
        for n in range(cases):
            name, kind = rng.choice(ODD_NAMES), rng.choice(ODD_TYPES)
            try:
                doc_id = kb.add(f"note {n}", original=b"x", original_name=name, media_type=kind)
            except trove.TroveError:
                counts["refused"] += 1
                continue
            except Exception as exc:  # what the harness is here to find
                counts["other"] += 1
                examples.append(f"{name!r} {kind!r}: {type(exc).__name__}")
                continue
            counts["stored"] += 1
            info = kb.backend.original_info(doc_id)
            assert info is not None
            values = [media_type(info), *headers(info).values()]
            if any(not v.isascii() or not v.isprintable() for v in values):
                counts["bad_headers"] += 1
                examples.append(f"{name!r} {kind!r}: headers {values!r}")
    return {**counts, "examples": examples[:5]}
