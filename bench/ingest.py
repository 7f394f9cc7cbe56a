"""Ingest speed and incremental sync on a synthetic folder, through the public API.

    python bench/ingest.py [--files 20000] [--tree DIR] [--formats] [--save]

Builds a tree of Markdown and text files (~2 KB each, half with front matter and links)
and reports, on a keyword-only store (``embedder=None``):

1. the first ingest: files/s and chunks/s (wall clock and this process's CPU time);
2. a second ingest with nothing changed, as a share of the first run's time, and how
   many files it read (a file whose size and times are those recorded is not read; files
   modified within 2 s of the first run's start are, so build the tree beforehand);
3. an ingest after changing 1% of the files;

then, on a store with a trivial counting embedder, how many chunks each run embeds:
after the 1% change, only the changed files' chunks may be embedded again.
``--formats`` also times the parsers of HTML, PDF and e-mail inline and in worker
processes (whether the pool pays off). ``--save`` writes bench/results/ingest.json.
The machine is shared and has 2 cores: wall-clock figures vary run to run; CPU time is
the steadier one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import trove
from trove.embedders.base import Embedder

RESULTS = Path(__file__).resolve().parent / "results"
REQUIRED_FILES_PER_S = 1000
REQUIRED_UNCHANGED_SHARE = 0.05


class CountingEmbedder(Embedder):
    """The cheapest possible model: a constant unit vector per text, counting texts."""

    model_id = "bench-counting"
    dimension = 8
    languages = None

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return np.full((len(texts), self.dimension), 8**-0.5, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 7.5, 7, 6.7, 6.3, 6, 5.9, 4.3, 4, 2.8, 2.8, 2.4, 2.4, 2.2, 2, 2, 1.9]
    weights += [1.5, 1, 0.8, 0.2, 0.2, 0.1, 0.1]
    return ["".join(rng.choices(letters, weights, k=rng.randint(2, 10))) for _ in range(size)]


def build_tree(root: Path, files: int, seed: int = 7) -> int:
    """``files`` files of ~2 KB in 100 folders; returns the total size in bytes."""
    rng = random.Random(seed)
    words = vocabulary(20_000, rng)
    # Zipf-like frequencies, as in prose; cumulative once, or choices() redoes it per call.
    cumulative = list(itertools.accumulate(1 / (r + 1) for r in range(len(words))))
    total = 0
    for i in range(files):
        folder = root / f"area{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        paragraphs = []
        size = 0
        while size < 1900:
            sentence = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 20)))
            paragraphs.append(sentence.capitalize() + ".")
            size += len(sentence) + 2
        body = "\n\n".join(paragraphs)
        if i % 2:
            link = f"area{(i + 1) % 100:02d}/note{i + 1}" if i + 1 < files else "note1"
            text = (
                f"---\ntitle: Note {i}\ntags: [t{i % 10}]\ndate: 2026-{i % 12 + 1:02d}-01\n---\n"
                f"# Note {i}\n\nSee [[{link}]].\n\n{body}\n"
            )
            path = folder / f"note{i}.md"
        else:
            text = body + "\n"
            path = folder / f"note{i}.txt"
        path.write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def change(root: Path, share: float) -> int:
    """Append a sentence to every 1/share-th file; returns how many changed."""
    paths = sorted(root.rglob("note*"))
    step = round(1 / share)
    for path in paths[::step]:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\nAn added sentence about zymurgy.\n")
    return len(paths[::step])


def timed(kb: trove.Store, tree: Path, **options: Any) -> dict[str, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    report = kb.ingest(tree, **options)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "seconds": wall,
        "cpu_seconds": cpu,
        "files": report.files,
        "files_read": report.files_read,
        "chunks": report.chunks,
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "links": report.links,
        "files_per_s": report.files / wall,
        "chunks_per_s": report.chunks / wall,
        "files_per_cpu_s": report.files / cpu if cpu else 0.0,
    }


def sync_runs(tree: Path, files: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with trove.open(Path(tmp) / "kb.db", embedder=None) as kb:
            results["first"] = timed(kb, tree)
            results["unchanged"] = timed(kb, tree)
            results["unchanged"]["share_of_first"] = (
                results["unchanged"]["seconds"] / results["first"]["seconds"]
            )
        work = Path(tmp) / "tree"
        shutil.copytree(tree, work)
        embedder = CountingEmbedder()
        with trove.open(Path(tmp) / "embedded.db", embedder=embedder) as kb:
            first = timed(kb, work)
            first["embedded_chunks"] = embedder.texts
            embedder.texts = 0
            changed = change(work, 0.01)
            after = timed(kb, work)
            after["changed_files"] = changed
            after["embedded_chunks"] = embedder.texts
            results["embedded_first"] = first
            results["one_percent_changed"] = after
    return results


def format_runs(count: int) -> dict[str, Any]:
    """Parse rates of the heavy formats, inline (1 worker) and in a pool (2 workers)."""
    import email.message

    from fpdf import FPDF

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("html", "pdf", "eml"):
            folder = Path(tmp) / kind
            folder.mkdir()
            for i in range(count):
                words = " ".join(f"word{(i * 31 + j) % 5000}" for j in range(300))
                if kind == "html":
                    page = (
                        f"<html><head><title>Page {i}</title><script>x()</script></head><body>"
                        f"<nav><a href='/'>Home</a></nav><article><h1>Page {i}</h1>"
                        f"<p>{words}</p><p>{words}</p></article><footer>(c)</footer></body></html>"
                    )
                    (folder / f"p{i}.html").write_text(page, encoding="utf-8")
                elif kind == "pdf":
                    pdf = FPDF()
                    pdf.set_font("helvetica", size=10)
                    for _ in range(3):
                        pdf.add_page()
                        pdf.multi_cell(0, 5, words)
                    pdf.output(str(folder / f"d{i}.pdf"))
                else:
                    msg = email.message.EmailMessage()
                    msg["From"], msg["To"], msg["Subject"] = "a@x", "b@x", f"Mail {i}"
                    msg["Message-ID"] = f"<{i}@x>"
                    msg.set_content(words)
                    msg.add_alternative(f"<p>{words}</p>", subtype="html")
                    (folder / f"m{i}.eml").write_bytes(bytes(msg))
            for workers in (1, 2):
                with trove.open(Path(tmp) / f"{kind}{workers}.db", embedder=None) as kb:
                    children = resource.getrusage(resource.RUSAGE_CHILDREN)
                    run = timed(kb, folder, workers=workers)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    run["worker_cpu_seconds"] = (after.ru_utime + after.ru_stime) - (
                        children.ru_utime + children.ru_stime
                    )
                    results[f"{kind} workers={workers}"] = run
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--tree", type=Path, help="Build (or reuse) the tree here.")
    parser.add_argument("--formats", action="store_true", help="Also time HTML, PDF, mail.")
    parser.add_argument("--format-files", type=int, default=200)
    parser.add_argument("--save", action="store_true", help="Write bench/results/ingest.json.")
    args = parser.parse_args()
    import _data

    print(f"machine: {_data.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or Path(tmp) / "tree"
        if not tree.exists() or not any(tree.iterdir()):
            started = time.perf_counter()
            size = build_tree(tree, args.files)
            took = time.perf_counter() - started
            print(f"built {args.files} files, {size / 1e6:.1f} MB, in {took:.1f} s")
        results: dict[str, Any] = {"machine": _data.machine(), "files": args.files}
        results.update(sync_runs(tree, args.files))
    if args.formats:
        results["formats"] = format_runs(args.format_files)
    print_results(results)
    if args.save:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "ingest.json").write_text(json.dumps(results, indent=2) + "\n")


def print_results(results: dict[str, Any]) -> None:
    first, again = results["first"], results["unchanged"]
    after = results["one_percent_changed"]
    rows = [
        ("first ingest (no embedder)", first),
        ("nothing changed", again),
        ("first ingest (counting embedder)", results["embedded_first"]),
        ("1% of files changed", after),
    ]
    print(f"{'run':34} {'wall s':>8} {'cpu s':>8} {'files/s':>9} {'chunks/s':>9}")
    for name, run in rows:
        print(
            f"{name:34} {run['seconds']:8.2f} {run['cpu_seconds']:8.2f} "
            f"{run['files_per_s']:9,.0f} {run['chunks_per_s']:9,.0f}"
        )
    ok = "meets" if first["files_per_s"] >= REQUIRED_FILES_PER_S else "MISSES"
    print(
        f"first ingest: {first['files_per_s']:,.0f} files/s wall, "
        f"{first['files_per_cpu_s']:,.0f} files per CPU-second ({ok} >= {REQUIRED_FILES_PER_S})"
    )
    share = again["share_of_first"]
    ok = "meets" if share <= REQUIRED_UNCHANGED_SHARE else "MISSES"
    print(
        f"nothing changed: {share:.1%} of the first run's time ({ok} <= 5%), "
        f"{again['files_read']} of {again['files']} files read"
    )
    embedded = results["embedded_first"]["embedded_chunks"]
    print(
        f"1% changed: {after['changed_files']} files changed, {after['updated']} updated, "
        f"{after['embedded_chunks']} chunks embedded (the first run embedded {embedded})"
    )
    for name, run in results.get("formats", {}).items():
        print(
            f"{name:20} {run['seconds']:6.2f} s wall  {run['files_per_s']:7.1f} files/s  "
            f"cpu {run['cpu_seconds']:.2f} s + workers {run['worker_cpu_seconds']:.2f} s"
        )


if __name__ == "__main__":
    main()
