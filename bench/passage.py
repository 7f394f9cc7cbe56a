"""Best-passage accuracy on CMRC 2018 dev: does a hit show the chunk that answers?

    python bench/passage.py [--split dev] [--chunk-chars 240] [--modes keyword,hybrid]

CMRC 2018 questions were written from one paragraph each (the judged document), and the
answer to each sits in a span of it. The BEIR layout in ../shared/data keeps no answer
text, so the span is found from the data: the sentence of the paragraph (cut at 。！？；
and line ends) that shares the most of the question's character bigrams — a question is
written from the sentence that holds its answer, in its words ("《战国无双3》是由哪两个
公司合作开发的？" from "《战国无双3》（）是由光荣和ω-force开发的…"). A judged
document found in the top 10 counts as a hit; the hit is right when the chunk it shows
holds as much of that sentence as the best of the document's chunks does (all of it,
unless the sentence is cut between two chunks).

The paragraphs are single chunks at trove's default chunk size (266-980 characters,
median 464, against 1,200), where every hit is trivially right; so the corpus is chunked
smaller here (``--chunk-chars``, default 240 with an overlap of 120): four chunks a
paragraph on average (4,675 chunks). Also prints nDCG@10 of the documents, which a
passage choice must not change.

The span is derived, not given: where a question shares most of its pairs with two
sentences, the earlier counts, and so does the passage choice on a tie; read the figure
as "the hit shows the chunk holding the sentence the question was most likely written
from", not as a reading-comprehension score.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

import _data
import trove
from trove.chunking import chunk_text

_SENTENCE = re.compile(r"[^。！？；\n]+[。！？；]?")


def bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def answer_span(paragraph: str, question: str) -> tuple[int, int]:
    """The character span of the sentence of ``paragraph`` sharing most of the
    question's bigrams (the earliest on a tie)."""
    wanted = bigrams(question)
    best, best_overlap = (0, len(paragraph)), -1
    for match in _SENTENCE.finditer(paragraph):
        overlap = len(bigrams(match.group()) & wanted)
        if overlap > best_overlap:
            best, best_overlap = match.span(), overlap
    return best


def covered(start: int, end: int, span: tuple[int, int]) -> int:
    """How many characters of ``span`` lie in ``start``..``end``."""
    return max(0, min(end, span[1]) - max(start, span[0]))


def run(split: str, chunk_chars: int, overlap: int, modes: list[str]) -> None:
    qrels = _data.qrels("cmrc2018", split)
    queries = _data.queries("cmrc2018", split)
    docs = _data.documents("cmrc2018")
    text_of = {d["source_id"]: d["text"] for d in docs}
    embedder = None if modes == ["keyword"] else "auto"
    with (
        tempfile.TemporaryDirectory() as tmp,
        trove.open(
            Path(tmp) / "kb.db", embedder=embedder, chunk_chars=chunk_chars, chunk_overlap=overlap
        ) as kb,
    ):
        ids = kb.add_many(docs)
        to_beir = {doc_id: d["source_id"] for doc_id, d in zip(ids, docs, strict=True)}
        chunks = kb.stats().chunks
        print(f"docs {len(docs)}  chunks {chunks} ({chunks / len(docs):.1f} a paragraph)")
        for mode in modes:
            right = hits = 0
            ranked: dict[str, dict[str, float]] = {}
            latencies = []
            for qid, question in queries.items():
                started = time.perf_counter()
                found = kb.search(question, mode=mode, limit=10, min_score=0)
                latencies.append((time.perf_counter() - started) * 1000)
                ranked[qid] = {to_beir[h.doc_id]: h.score for h in found}
                for hit in found:
                    beir = to_beir[hit.doc_id]
                    if qrels[qid].get(beir, 0) > 0:
                        text = text_of[beir]
                        span = answer_span(text, question)
                        most = max(
                            covered(c.start, c.end, span)
                            for c in chunk_text(text, max_chars=chunk_chars, overlap=overlap)
                        )
                        hits += 1
                        right += covered(hit.chunk.start, hit.chunk.end, span) == most
            scores = _data.evaluate(ranked, qrels)
            print(
                f"{mode:8s} best-passage accuracy {right / hits:.4f} ({right}/{hits} hits)  "
                f"nDCG@10 {scores['nDCG@10']:.4f}  p50 {statistics.median(latencies):.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--chunk-chars", type=int, default=240)
    parser.add_argument("--chunk-overlap", type=int, default=120)
    parser.add_argument("--modes", default="keyword,semantic,hybrid")
    args = parser.parse_args()
    print(f"machine: {_data.machine()}")
    run(args.split, args.chunk_chars, args.chunk_overlap, args.modes.split(","))


if __name__ == "__main__":
    main()
