"""Originals and mail attachments (issue 19): what keeping the source bytes costs.

    python bench/originals.py [--messages 1000] [--blob-mb 100] [--repeat 3] [--save]

1. Builds an mbox of ``--messages`` messages, ~30% with a PDF (fpdf2) or HTML
   attachment (~300 of 1,000; some attachments recur across messages, as forwarded
   contracts do), and ingests it into a fresh keyword-only store twice, without and with
   ``keep_originals``: wall time (median of ``--repeat``), store size against the mbox's
   size, and the peak resident memory of the process that ran the ingest (each run in a
   subprocess, ``ru_maxrss``).
2. Stores one ``--blob-mb`` MB original from a file and reads it back through
   ``Store.original_pieces`` into /dev/null: MB/s in and out (median), peak memory.

Say the machine and its load (``uptime``) with the figures; ``--save`` writes
bench/results/originals.json.
"""

from __future__ import annotations

import argparse
import email.message
import json
import mailbox
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RUN_INGEST = r"""
import json, resource, sys, time
import trove
db, box, keep = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
started = time.perf_counter()
with trove.open(db, embedder=None) as kb:
    report = kb.ingest(box, keep_originals=keep, workers=1)
    blobs = len(kb.backend.original_hashes())
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "added": report.added, "failed": len(report.failed),
                  "blobs": blobs,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

RUN_BLOB = r"""
import json, resource, sys, time
import trove
db, path = sys.argv[1], sys.argv[2]
with trove.open(db, embedder=None) as kb:
    started = time.perf_counter()
    doc_id = kb.add("blob", original=path)
    stored = time.perf_counter() - started
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        for piece in kb.original_pieces(doc_id):
            sink.write(piece)
    read = time.perf_counter() - started
print(json.dumps({"store_s": stored, "read_s": read,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""".replace("import json,", "import os, json,")


def build_mbox(folder: Path, messages: int) -> Path:
    from fpdf import FPDF

    pdfs = []
    for i in range(40):
        pdf = FPDF()
        pdf.set_font("helvetica", size=11)
        for page in range(3):
            pdf.add_page()
            pdf.multi_cell(0, 7, f"Contract {i} page {page}. " + "Terms and conditions. " * 60)
        pdfs.append(bytes(pdf.output()))
    box = mailbox.mbox(folder / "mail.mbox")
    for n in range(messages):
        msg = email.message.EmailMessage()
        msg["From"] = f"Person {n % 37} <p{n % 37}@example.com>"
        msg["To"] = "team@example.com"
        msg["Subject"] = f"Update {n}"
        msg["Message-ID"] = f"<m{n}@example.com>"
        msg["Date"] = "Tue, 03 Nov 2026 09:00:00 +0000"
        msg.set_content(f"Message {n}. " + "Status of the project and next steps. " * 20)
        if n % 10 < 3:  # ~30% carry an attachment: half PDF, half HTML
            if n % 2:
                msg.add_attachment(
                    pdfs[n % len(pdfs)],
                    maintype="application",
                    subtype="pdf",
                    filename=f"contract-{n % len(pdfs)}.pdf",
                )
            else:
                page = f"<html><body><h1>Report {n}</h1><p>{'Figures. ' * 300}</p></body></html>"
                msg.add_attachment(page, subtype="html", filename=f"report-{n}.html")
        box.add(msg)
    box.flush()
    box.close()
    return folder / "mail.mbox"


def run(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def ingest_figures(work: Path, box: Path, repeat: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"mbox_mb": box.stat().st_size / 1e6}
    for keep in (False, True):
        runs = []
        for i in range(repeat):
            db = work / f"kb-{int(keep)}-{i}.db"
            result = run(RUN_INGEST, str(db), str(box), "1" if keep else "0")
            size = sum(p.stat().st_size for p in work.glob(f"kb-{int(keep)}-{i}.db*"))
            runs.append({**result, "store_mb": size / 1e6})
        label = "with_originals" if keep else "without_originals"
        figures[label] = {
            "median_s": statistics.median(r["seconds"] for r in runs),
            "store_mb": runs[-1]["store_mb"],
            "store_vs_mbox": runs[-1]["store_mb"] / figures["mbox_mb"],
            "maxrss_mb": max(r["maxrss_mb"] for r in runs),
            "documents": runs[-1]["added"],
            "failed": runs[-1]["failed"],
            "blobs": runs[-1]["blobs"],
        }
    return figures


def blob_figures(work: Path, megabytes: int, repeat: int) -> dict[str, Any]:
    path = work / "blob.bin"
    with path.open("wb") as f:
        for _ in range(megabytes):
            f.write(os.urandom(1 << 20))
    runs = [run(RUN_BLOB, str(work / f"blob-{i}.db"), str(path)) for i in range(repeat)]
    size = megabytes * (1 << 20) / 1e6
    return {
        "blob_mb": size,
        "store_mb_s": statistics.median(size / r["store_s"] for r in runs),
        "read_mb_s": statistics.median(size / r["read_s"] for r in runs),
        "maxrss_mb": max(r["maxrss_mb"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--blob-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        box = build_mbox(work, args.messages)
        print(
            f"built {box.name}: {box.stat().st_size / 1e6:.1f} MB "
            f"in {time.perf_counter() - started:.1f} s"
        )
        results = {
            "machine": f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}",
            "ingest": ingest_figures(work, box, args.repeat),
            "blob": blob_figures(work, args.blob_mb, args.repeat),
        }
    print(json.dumps(results, indent=2))
    if args.save:
        out = Path(__file__).parent / "results" / "originals.json"
        out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
