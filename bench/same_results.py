"""Same answers before and after a speed change: every SciFact test query's hits (source
id, score, snippet) written to a JSON file, or compared with a file written before.

    python bench/same_results.py --write /tmp/before.json         # on the old code
    python bench/same_results.py --compare /tmp/before.json       # on the new code
    python bench/same_results.py --modes keyword,hybrid --write /tmp/before.json
    /old/.venv/bin/python bench/same_results.py --store /tmp/old-copy.db --write /tmp/b.json

Uses the quality benchmark's store (bench/.cache/scifact-default.db, bench/quality.py
builds it). Scores must match exactly (floats as JSON keeps them), ids in the same order.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import _data
import trove

STORE = Path(__file__).resolve().parent / ".cache" / "scifact-default.db"


def answers(modes: list[str], limits: list[int], store: Path) -> dict[str, list[list[object]]]:
    found: dict[str, list[list[object]]] = {}
    with trove.open(store) as kb:
        for mode in modes:
            for limit in limits:
                for qid, text in _data.queries("scifact", "test").items():
                    hits = kb.search(text, mode=mode, limit=limit)
                    found[f"{mode}/{limit}/{qid}"] = [
                        [h.source_id, h.score, h.snippet] for h in hits
                    ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="keyword")
    parser.add_argument("--limits", default="10,100")
    parser.add_argument("--store", type=Path, default=STORE, help="a copy of the store")
    out = parser.add_mutually_exclusive_group(required=True)
    out.add_argument("--write", type=Path)
    out.add_argument("--compare", type=Path)
    args = parser.parse_args()
    found = answers(args.modes.split(","), [int(n) for n in args.limits.split(",")], args.store)
    if args.write:
        args.write.write_text(json.dumps(found), encoding="utf-8")
        print(f"{len(found)} result lists written to {args.write}")
        return
    before = json.loads(args.compare.read_text(encoding="utf-8"))
    differ = [key for key in before if before[key] != found.get(key)]
    differ += [key for key in found if key not in before]
    for key in differ[:5]:
        print(f"{key}:\n  before {before.get(key)}\n  after  {found.get(key)}")
    print(f"{len(found)} result lists, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
