"""Nonsense queries against the CLI's default floor: how often does one still show a hit?

    python bench/nonsense.py

200 queries (seeded): 50 of 2-4 random English words, 50 random Latin strings, 50 of 2-3
random Chinese words, 50 random strings of CJK characters. The English words are drawn
from the SciFact corpus's vocabulary and the Chinese words from CMRC 2018's (words the
stores know, the hard case), each query run in the default (hybrid) mode against the
sample notes and the SciFact and CMRC 2018 stores (bench/.cache, default embedder), as
``trove search`` does. A query "shows a hit" when any of its top 10 scores at least the
CLI's floor; the target is at most 5% of the 200 on each store.
The figures are kept in bench/.cache/nonsense.json for ``calibrate.py report``'s section
of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
import tempfile
import time
from collections import Counter
from pathlib import Path

import _data
import trove
from quality import CACHE
from trove.search.calibration import FLOOR

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "notes"


def vocabulary(name: str, pattern: str, size: int) -> list[str]:
    counts: Counter[str] = Counter()
    for doc in _data.corpus(name):
        counts.update(re.findall(pattern, doc["text"].lower()))
    return [w for w, n in counts.most_common(size * 3)[size // 10 :] if n > 2][:size]


def queries(seed: int = 15) -> dict[str, list[str]]:
    rng = random.Random(seed)
    english = vocabulary("scifact", r"[a-z]{4,12}", 20_000)
    chinese = vocabulary("cmrc2018", r"[\u4e00-\u9fff]{2}", 20_000)
    latin = string.ascii_lowercase + string.digits
    return {
        "random English words": [
            " ".join(rng.sample(english, rng.randint(2, 4))) for _ in range(50)
        ],
        "random Latin strings": [
            "".join(rng.choices(latin, k=rng.randint(6, 16))) for _ in range(50)
        ],
        "random Chinese words": [
            "".join(rng.sample(chinese, rng.randint(2, 3))) for _ in range(50)
        ],
        "random CJK strings": [
            "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(3, 8)))
            for _ in range(50)
        ],
    }


def shown(kb: trove.Store, query: str) -> bool:
    return any(hit.score >= FLOOR for hit in kb.search(query, limit=10))


def stores(tmp: Path) -> list[tuple[str, Path]]:
    """The sample notes (built here) and the data sets' stores bench/quality.py keeps
    (default embedder; ``python bench/quality.py`` builds them)."""
    notes = tmp / "notes.db"
    with trove.open(notes) as kb:
        kb.ingest(SAMPLES)
    found = [("sample notes", notes)]
    for label, name in (("SciFact", "scifact"), ("CMRC 2018", "cmrc2018")):
        path = CACHE / f"{name}-default.db"
        if path.exists():
            found.append((label, path))
        else:
            print(f"{label}: no store at {path} (run bench/quality.py first); left out")
    return found


def main() -> None:
    print(f"machine: {_data.machine()}  floor: {FLOOR}")
    sets = queries()
    table: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in stores(Path(tmp)):
            total_shown = 0
            with trove.open(path) as kb:
                for kind, items in sets.items():
                    count = sum(shown(kb, q) for q in items)
                    total_shown += count
                    print(f"{label:<13} {kind:<21} a hit shown for {count}/{len(items)}")
                    table.append(f"| {label} | {kind} | {count}/{len(items)} |")
            share = f"{total_shown / 2:.1f}%"
            print(f"{label:<13} all 200 nonsense queries: a hit shown for {share}")
            table.append(f"| {label} | **all 200** | **{total_shown}/200 ({share})** |")
    load = os.getloadavg()[0]
    note = f"{time.strftime('%Y-%m-%d')}, floor {FLOOR}, {_data.machine()}, load {load:.1f}"
    (CACHE / "nonsense.json").write_text(json.dumps({"note": note, "table": table}))


if __name__ == "__main__":
    main()
