"""Query latency per mode on a store of long CJK documents (issue 15: hybrid p50 within
keyword p50 + semantic p50 + 5 ms).

    python bench/long_cjk.py                                  # zh and ko, default embedder
    python bench/long_cjk.py --embedder multilingual --scripts ko
    python bench/long_cjk.py --save runs.json                 # hit ids and scores per query
    python bench/long_cjk.py --compare runs.json              # ... identical to a saved run?

The store: 720 "pages" of about 2,000 characters, made of the CMRC 2018 paragraphs
packed in order (each pass over the corpus in a fixed shuffled order, seeded by the pass
number, until 720 pages), so a paragraph sits in two or three pages. Queries: the first
``--queries`` CMRC 2018 dev questions; a question's relevant pages are those that hold its
paragraph.

``ko`` is a Korean-script variant (no Korean OCR data is available offline): every Han
character becomes the Hangul syllable U+AC00 + (code point x 40503 mod 11172), and a
space follows each syllable whose Han code point is divisible by four, so words average
four syllables and one-syllable words are common, as in Korean text (their queries use
the substring fallback); full-width punctuation becomes ASCII punctuation and a space.
The mapping only depends on the character, so a question maps onto the same spaced text
as its paragraph. No model reads this text (semantic quality on it is noise): it is a
latency benchmark of long CJK chunks.

Prints, per script and mode, nDCG@10 at limit 100 and latency p50/p95 at limit 10 (every
query once, after one warm-up pass; hybrid and semantic include embedding the query),
and the check hybrid p50 - (keyword p50 + semantic p50).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import _data
import trove

CACHE = Path(__file__).resolve().parent / ".cache"
PAGES = 720
PAGE_CHARS = 2000
MODES = ("keyword", "semantic", "hybrid")
_HANGUL, _SYLLABLES, _STRIDE = 0xAC00, 11172, 40503
_PUNCTUATION = {"，": ", ", "。": ". ", "、": ", ", "；": "; ", "：": ": ", "？": "? ", "！": "! "}


def hangul(text: str) -> str:
    """The Korean-script variant of Chinese ``text`` (see the module's docstring)."""
    out = []
    for char in text:
        code = ord(char)
        if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            out.append(chr(_HANGUL + code * _STRIDE % _SYLLABLES))
            if code % 4 == 0:
                out.append(" ")
        else:
            out.append(_PUNCTUATION.get(char, char))
    return "".join(out)


def pages(script: str) -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    """The pages as trove documents, and the pages that hold each paragraph."""
    paragraphs = [
        (d["_id"], hangul(d["text"]) if script == "ko" else d["text"])
        for d in _data.corpus("cmrc2018")
    ]
    docs: list[dict[str, str]] = []
    holds: dict[str, list[str]] = {}
    rounds = 0
    while len(docs) < PAGES:
        order = list(paragraphs)
        random.Random(rounds).shuffle(order)
        rounds += 1
        page: list[tuple[str, str]] = []
        for pid, text in order:
            page.append((pid, text))
            if sum(len(t) for _, t in page) >= PAGE_CHARS - 250:
                docs.append(_page(page, len(docs), script, holds))
                page = []
                if len(docs) == PAGES:
                    break
    return docs, holds


def _page(
    page: list[tuple[str, str]], number: int, script: str, holds: dict[str, list[str]]
) -> dict[str, str]:
    source_id = f"page-{number}"
    for pid, _ in page:
        holds.setdefault(pid, []).append(source_id)
    text = "\n\n".join(t for _, t in page)
    return {
        "text": text,
        "title": "",
        "source": f"long-cjk-{script}",
        "source_id": source_id,
    }


def queries(script: str, count: int) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """The first ``count`` dev questions and their relevant pages."""
    _, holds = pages(script)
    judged = _data.qrels("cmrc2018", "dev")
    found = list(_data.queries("cmrc2018", "dev").items())[:count]
    texts = {qid: hangul(text) if script == "ko" else text for qid, text in found}
    qrels = {qid: {page: 1 for pid in judged[qid] for page in holds.get(pid, [])} for qid in texts}
    return texts, qrels


def build(script: str, embedder: str) -> Path:
    path = CACHE / f"long-cjk-{script}-{embedder.replace(':', '_')}.db"
    if path.exists():
        return path
    CACHE.mkdir(exist_ok=True)
    docs, _ = pages(script)
    started = time.perf_counter()
    with trove.open(path, embedder=embedder) as kb:
        kb.add_many(docs)
        chunks = kb.stats().chunks
    took = time.perf_counter() - started
    print(f"built {path.name}: {len(docs)} pages, {chunks} chunks in {took:.0f} s")
    return path


def measure(
    path: Path, texts: dict[str, str], qrels: dict[str, dict[str, int]]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[tuple[str, float]]]]]:
    figures: dict[str, dict[str, float]] = {}
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
    with trove.open(path) as kb:
        kb.search("warm up", mode="hybrid", limit=10)
        for mode in MODES:
            run: dict[str, dict[str, float]] = {}
            saved: dict[str, list[tuple[str, float]]] = {}
            for qid, text in texts.items():  # also the warm-up pass of the timed one
                hits = kb.search(text, mode=mode, limit=100)
                run[qid] = {str(h.source_id): h.score for h in hits}
                saved[qid] = [(str(h.source_id), round(h.score, 9)) for h in hits]
            latencies = []
            for text in texts.values():
                started = time.perf_counter()
                kb.search(text, mode=mode, limit=10)
                latencies.append((time.perf_counter() - started) * 1000)
            figures[mode] = {
                "nDCG@10": _data.evaluate(run, qrels)["nDCG@10"],
                "p50_ms": _data.median(latencies),
                "p95_ms": _data.percentile(latencies, 0.95),
            }
            runs[mode] = saved
    return figures, runs


Runs = dict[str, dict[str, list[tuple[str, float]]]]  # mode -> query id -> (page, score)


def compare(saved: dict[str, dict[str, list[list[object]]]], runs: Runs) -> None:
    for mode, run in runs.items():
        before = saved.get(mode, {})
        differ = [qid for qid, hits in run.items() if [list(h) for h in hits] != before.get(qid)]
        same = len(run) - len(differ)
        print(f"  {mode:<8} {same}/{len(run)} queries identical to the saved run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--scripts", default="zh,ko")
    parser.add_argument("--queries", type=int, default=300, help="the first N dev questions")
    parser.add_argument("--save", help="write hit ids and scores per query to this JSON file")
    parser.add_argument("--compare", help="compare hits with a file --save wrote")
    args = parser.parse_args()
    print(f"machine: {_data.machine()}  embedder: {args.embedder}")
    saved_all = json.loads(Path(args.compare).read_text()) if args.compare else {}
    out = {}
    for script in args.scripts.split(","):
        path = build(script, args.embedder)
        texts, qrels = queries(script, args.queries)
        figures, runs = measure(path, texts, qrels)
        for mode, f in figures.items():
            print(
                f"long-cjk {script} {mode:<8} nDCG@10 {f['nDCG@10']:.4f}  "
                f"p50 {f['p50_ms']:.1f} ms  p95 {f['p95_ms']:.1f} ms"
            )
        over = figures["hybrid"]["p50_ms"] - figures["keyword"]["p50_ms"]
        over -= figures["semantic"]["p50_ms"]
        print(f"long-cjk {script} hybrid p50 - (keyword p50 + semantic p50) = {over:+.1f} ms")
        if args.compare:
            compare(saved_all.get(script, {}), runs)
        out[script] = runs
    if args.save:
        Path(args.save).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
