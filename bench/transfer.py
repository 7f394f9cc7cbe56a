"""Export, import and backup speed on the SciFact corpus (5,183 abstracts).

    python bench/transfer.py [--docs 5183] [--repeats 3]

Fills a store (hash:256 embedder: the figures are about moving data, not embedding),
then times `trove export --vectors` to JSONL, `trove import` of that file into a fresh
store (vectors carried, nothing embedded), and `trove backup`; medians of the repeats,
with the sizes of the store and the export.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import _data
import trove
from trove.transfer.backup import backup
from trove.transfer.jsonl import export_jsonl, import_jsonl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5183)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    docs = _data.documents("scifact")[: args.docs]
    times: dict[str, list[float]] = {"export": [], "import": [], "backup": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source, dump = root / "src.db", root / "dump.jsonl"
        with trove.open(source, embedder="hash:256") as kb:
            kb.add_many(docs)
        for run in range(args.repeats):
            with trove.open(source, embedder="hash:256") as kb, dump.open("w") as out:
                started = time.perf_counter()
                export_jsonl(kb, out, vectors=True)
                times["export"].append(time.perf_counter() - started)
            target = root / f"dst{run}.db"
            with trove.open(target, embedder="hash:256") as kb, dump.open() as lines:
                started = time.perf_counter()
                report = import_jsonl(kb, lines)
                times["import"].append(time.perf_counter() - started)
                assert report.added == len(docs) and report.embedded == 0
            started = time.perf_counter()
            backup(source, root / f"copy{run}.db")
            times["backup"].append(time.perf_counter() - started)
        sizes = {"store": os.path.getsize(source), "export": os.path.getsize(dump)}
    print(f"{_data.machine()}, load {os.getloadavg()[0]:.1f}; {len(docs)} documents")
    print(
        f"store {sizes['store'] / 1e6:.1f} MB, export with vectors {sizes['export'] / 1e6:.1f} MB"
    )
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:7s} median {median:6.2f} s  ({len(docs) / median:,.0f} docs/s)")


if __name__ == "__main__":
    main()
