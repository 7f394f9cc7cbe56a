"""Which B-trees a bulk write dirties: the pages one ``add_many`` batch writes to the log,
by table or index.

    python bench/bulk_pages.py STORE [--docs 1000]

Writes into a copy of ``STORE`` (beside it; its write-ahead log checkpointed first) one
warm-up batch, empties the log, then ``--docs`` one-chunk documents of bench/bulk.py in
one batch with the log kept (the backend's fold after a bulk write turned off), and
reports the distinct pages the log holds, by owner (SQLite's ``dbstat``: a full read of
the file, ~20 s at 1M chunks). A page written twice counts once, as a checkpoint copies it
once.
"""

from __future__ import annotations

import argparse
import collections
import os
import struct
from pathlib import Path

import apsw

import trove
from bulk import copy_store, items
from trove.backends.sqlite.backend import SQLiteBackend


def logged_pages(wal: Path) -> set[int]:
    """Page numbers of the frames in the write-ahead log ``wal``."""
    data = wal.read_bytes()
    size = struct.unpack(">I", data[8:12])[0]
    pages, at = set(), 32  # the log's header, then frames: a 24-byte header and a page
    while at + 24 + size <= len(data):
        pages.add(struct.unpack(">I", data[at : at + 4])[0])
        at += 24 + size
    return pages


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()
    path = args.store.with_name(f"pages-{os.getpid()}.db")
    copy_store(args.store, path)
    SQLiteBackend.fold_log = lambda self: None  # type: ignore[method-assign]
    try:
        store = trove.open(str(path), embedder=None)
        store.add_many(items(args.docs, 7, start=50_000_000), batch_size=args.docs)
        store.backend.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        store.add_many(items(args.docs, 8, start=60_000_000), batch_size=args.docs)
        pages = logged_pages(Path(f"{path}-wal"))
        conn = apsw.Connection(str(path))
        owner = {int(p): str(n) for n, p in conn.execute("SELECT name, pageno FROM dbstat")}
        conn.close()
        store.close()
    finally:
        for leftover in path.parent.glob(f"{path.name}*"):
            if leftover.is_dir():
                continue
            leftover.unlink()
    counts = collections.Counter(owner.get(p, "?") for p in pages)
    print(f"{len(pages)} pages for {args.docs} documents ({args.store})")
    for name, n in counts.most_common(12):
        print(f"{n:8d}  {name}")


if __name__ == "__main__":
    main()
