"""Peak memory of one large file (issue 28, item 11): ``add`` of a large text, ``ingest``
of a large .txt and of a large .eml message, each in a fresh process, peak RSS against
the file's size. The aim: peak RSS at most 3x the largest file.

    python bench/large_file.py                 # 100 MB text, 150 MB message
    python bench/large_file.py --mb 20         # quicker (both files 20 MB)

The text is made-up words in paragraphs; the embedder is the deterministic hash:64
(memory of the store and write path, not of a model). Results: bench/results/large_file.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "large_file.json"
CHILD = """
import resource, sys, trove
kind, db, path = sys.argv[1:4]
with trove.open(db, embedder="hash:64") as kb:
    if kind == "add":
        with open(path, encoding="utf-8") as f:
            kb.add(f.read(), source="big")
    else:
        kb.ingest(path)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def make_text(path: Path, size: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9)))
        for _ in range(5000)
    ]
    paragraph = lambda: " ".join(rng.choices(words, k=80)) + ".\n\n"  # noqa: E731
    block = "".join(paragraph() for _ in range(200)).encode()
    with path.open("wb") as out:
        written = 0
        while written < size:
            out.write(block)
            written += len(block)


def make_mail(path: Path, size: int) -> None:
    body = path.with_suffix(".body")
    make_text(body, size)
    with path.open("wb") as out:
        out.write(
            b"From: ana@example.org\nTo: bo@example.org\nSubject: a long one\n"
            b"Date: Tue, 3 Nov 2026 09:00:00 +0000\nMessage-ID: <big@example.org>\n"
            b"Content-Type: text/plain; charset=utf-8\n\n"
        )
        with body.open("rb") as src:
            while piece := src.read(1 << 20):
                out.write(piece)
    body.unlink()


def measure(kind: str, path: Path, tmp: Path) -> dict[str, float]:
    db = tmp / f"{kind}-{path.suffix[1:]}.db"
    target = path.parent if kind == "ingest" else path
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(db), str(target)],
        capture_output=True,
        text=True,
        check=True,
    )
    peak = int(done.stdout.split()[-1])
    size = path.stat().st_size
    return {
        "file_mb": round(size / 1e6, 1),
        "peak_rss_mb": round(peak / 1e6),
        "ratio": round(peak / size, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=0, help="both files this size (MB)")
    args = parser.parse_args()
    text_mb, mail_mb = (args.mb, args.mb) if args.mb else (100, 150)
    results: dict[str, object] = {"load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for name, kind, make, mb in (
            ("add_text", "add", make_text, text_mb),
            ("ingest_txt", "ingest", make_text, text_mb),
            ("ingest_eml", "ingest", make_mail, mail_mb),
        ):
            folder = tmp / name
            folder.mkdir()
            path = folder / ("big.eml" if kind == "ingest" and make is make_mail else "big.txt")
            make(path, mb * 1_000_000)
            results[name] = measure(kind, path, tmp)
            print(name, results[name], flush=True)
            path.unlink()
    results["load_after"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
