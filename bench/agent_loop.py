"""The agent loop, measured: query variants, cached LLM expansion, live event delivery.

    python bench/agent_loop.py [--mode keyword|hybrid] [--skip-quality] [--rounds N]
                               [--embedder SPEC]

1. nDCG@10 of the plain query vs the query with mechanical variants (no LLM), fused by
   ``search(query, variants=[...])``, on SciFact test and CMRC 2018 dev. Variants: the
   query split into clauses (at commas, semicolons, "and"/"but"/"which"/"that", CJK
   punctuation), and its longest words alone (a cheap stand-in for its rarest terms).
2. Search latency (p50) on SciFact: plain vs ``expand="llm"`` with the expansion cached
   (a canned model on loopback answered once per query beforehand), and the expansion
   step alone (the cache lookup).
3. Event delivery: commit (``add`` returned in another connection) to an SSE client of
   ``trove serve``'s app reading ``GET /v1/events`` (p50, p95).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _data
import trove
from trove.expansion import expand
from trove.llm import ChatModel

_CLAUSE = re.compile(r"[,;:，；、。？！?]|\b(?:and|but|which|that|whereas|because)\b", re.I)
_WORD = re.compile(r"\w+")
CACHE = Path(__file__).resolve().parent / ".cache"


def mechanical_variants(query: str) -> list[str]:
    clauses = [c.strip() for c in _CLAUSE.split(query) if c and len(c.strip()) > 3]
    words = sorted(set(_WORD.findall(query)), key=len, reverse=True)
    keywords = " ".join(w for w in words[:3] if len(w) > 3)
    found = [*clauses[:3], keywords] if len(clauses) > 1 else [keywords]
    return [v for v in dict.fromkeys(found) if v and v.casefold() != query.casefold()]


@contextmanager
def loaded(name: str, mode: str, embedder: str | None = None) -> Iterator[trove.Store]:
    """A fresh keyword store of the data set, or for hybrid a copy of the one
    bench/quality.py embedded (bench/.cache/NAME-default.db: embedding SciFact takes half
    an hour), or one embedded now with ``embedder`` (``hash:384``: seconds; for latency,
    its nDCG means nothing); hits' source ids are the BEIR ids."""
    with tempfile.TemporaryDirectory() as tmp:
        model = ChatModel("canned", base_url=_fake_llm(), timeout=5)
        path = Path(tmp) / "kb.db"
        if mode == "keyword" or embedder is not None:
            with trove.open(path, embedder=embedder, llm=model) as kb:
                kb.add_many(_data.documents(name))
                kb.warm()
                yield kb
            return
        cached = CACHE / f"{name}-default.db"
        if not cached.exists():
            raise SystemExit(f"{cached} is missing: run bench/quality.py first")
        shutil.copy(cached, path)
        index = cached.with_name(cached.name + ".trove-index")
        if index.exists():
            shutil.copytree(index, path.with_name(path.name + ".trove-index"))
        with trove.open(path, embedder="auto", llm=model) as kb:
            yield kb


def quality(name: str, split: str, mode: str) -> dict[str, float]:
    with loaded(name, mode) as kb:
        queries = _data.queries(name, split)
        judged = _data.qrels(name, split)
        runs: dict[str, dict[str, dict[str, float]]] = {"plain": {}, "variants": {}}
        with_variants = 0
        for qid, text in queries.items():
            variants = mechanical_variants(text)
            with_variants += bool(variants)
            for label, extra in (("plain", []), ("variants", variants)):
                hits = kb.search(text, mode=mode, limit=10, variants=extra)
                # Ranks, not scores: fused lists are ordered by reciprocal rank.
                runs[label][qid] = {str(h.source_id): 10.0 - i for i, h in enumerate(hits)}
        result = {f"{k} nDCG@10": _data.evaluate(r, judged)["nDCG@10"] for k, r in runs.items()}
        return {**result, "queries": len(queries), "with variants": with_variants}


def latency(mode: str, rounds: int = 3, embedder: str | None = None) -> dict[str, float]:
    with loaded("scifact", mode, embedder) as kb:
        queries = list(_data.queries("scifact", "test").values())
        for text in queries:  # fill the expansion cache: one model call per query
            kb.search(text, mode=mode, expand="llm")
        timings: dict[str, list[float]] = {"plain": [], "expand=llm cached": [], "lookup": []}
        # CPU time of the process (every thread): the work a search does, which the load
        # of a shared machine does not inflate as it does wall time.
        work: dict[str, list[float]] = {"plain cpu": [], "expand=llm cached cpu": []}
        for _ in range(rounds):
            for text in queries:
                for label in ("plain", "expand=llm cached", "lookup"):
                    started, cpu = time.perf_counter(), time.process_time()
                    if label == "lookup":
                        expand(kb, text, semantic=mode != "keyword")
                    else:
                        option: Any = "llm" if label != "plain" else 0
                        kb.search(text, mode=mode, expand=option)
                    timings[label].append((time.perf_counter() - started) * 1000)
                    if label != "lookup":
                        work[f"{label} cpu"].append((time.process_time() - cpu) * 1000)
        stats = kb.expansion_counts.to_dict()
    result = {f"{k} p50 ms": _data.median(v) for k, v in {**timings, **work}.items()}
    result["cache hit rate"] = stats["hit_rate"] or 0.0
    return result


def event_delivery(events: int = 200) -> dict[str, float]:
    import sys

    import httpx

    from trove.interfaces.config import ServerConfig
    from trove.interfaces.http import create_app

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from helpers.loopback import serving

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kb.db"
        committed: dict[str, float] = {}
        delays: list[float] = []
        with trove.open(path, embedder=None) as kb, serving(create_app(kb, ServerConfig())) as url:
            done = threading.Event()

            def read() -> None:
                with (
                    httpx.Client(base_url=url, timeout=60) as client,
                    client.stream("GET", "/v1/events") as response,
                ):
                    for line in response.iter_lines():
                        if line == ": trove events":
                            done.set()
                        if line.startswith("data:"):
                            event = json.loads(line[5:])
                            arrived = time.time()
                            while event["id"] not in committed:
                                time.sleep(0.0001)
                            delays.append((arrived - committed[event["id"]]) * 1000)
                            if len(delays) == events:
                                return

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            done.wait(20)
            with trove.open(path, embedder=None) as writer:  # another connection
                for i in range(events):
                    doc = writer.add(f"event {i}", source_id=str(i))
                    committed[doc] = time.time()
                    time.sleep(0.01)
            reader.join(60)
    return {
        "events": len(delays),
        "p50 ms": _data.median(delays),
        "p95 ms": _data.percentile(delays, 0.95),
    }


def _fake_llm() -> str:
    """An OpenAI-compatible server on loopback answering every query with three keyword
    variants and two paraphrases built from its words (deterministic, instant)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            words = _WORD.findall(body["messages"][-1]["content"])
            answer = {
                "keywords": [" ".join(words[i : i + 3]) for i in (0, 3, 6) if words[i : i + 3]],
                "paraphrases": [" ".join(reversed(words)), " ".join(words[1:])],
                "passage": " ".join(words),
            }
            reply = {"choices": [{"message": {"content": json.dumps(answer)}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="keyword", choices=["keyword", "hybrid"])
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="latency: passes over the queries")
    parser.add_argument("--sets", default="scifact,cmrc2018", help="quality: data sets")
    parser.add_argument("--embedder", help="hybrid: embed the store now with this embedder")
    args = parser.parse_args()
    print(f"machine: {_data.machine()}; load average {os.getloadavg()[0]:.1f}")
    if not args.skip_quality:
        for name, split in (("scifact", "test"), ("cmrc2018", "dev")):
            if name not in args.sets.split(","):
                continue
            print(f"{name} ({split}, {args.mode}): {_fmt(quality(name, split, args.mode))}")
    timings = latency(args.mode, args.rounds, args.embedder)
    print(f"latency (scifact test, {args.mode}): {_fmt(timings)}")
    print(f"event delivery commit -> SSE client: {_fmt(event_delivery())}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def _fmt(values: dict[str, float]) -> str:
    return "  ".join(
        f"{k} {v:.4f}" if isinstance(v, float) and v < 10 else f"{k} {v:.1f}"
        for k, v in values.items()
    )


if __name__ == "__main__":
    main()
