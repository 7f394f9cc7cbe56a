"""Known-item retrieval sets in six languages from Debian's package descriptions (DDTP).

    python bench/debian_sets.py RAW OUT     # RAW holds Translation-<lang> files
    python bench/debian_sets.py RAW OUT --docs 2000 --queries 400

Debian's Description Translation Project translates each package's description: a short
synopsis (one line) and a long description. For each language L, a query is a package's
synopsis in L, its relevant document the long description of the same package in L, and
the corpus every (distinct) long description in L of a deterministic sample. The
Translation files come with apt (``Acquire::Languages``; see docs/benchmarks.md for the
commands). Writes BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv) to
OUT/debian-<lang>; the data stays outside git.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = ("en", "de", "fr", "ja", "ko", "zh_CN")
# A line wrapped between two CJK characters joins without a space (the translators wrap
# Japanese, Chinese and Korean inside words).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")


@dataclass(frozen=True)
class Description:
    """One package's translated description."""

    package: str
    synopsis: str
    long: str


def parse(text: str, language: str) -> Iterator[Description]:
    """The descriptions of a Translation-<language> file's text (deb822 stanzas); a
    stanza without a synopsis or without a long description is left out."""
    field = f"Description-{language}:"
    for stanza in re.split(r"\n\s*\n", text):
        package, synopsis, body, inside = "", "", [], False
        for line in stanza.splitlines():
            if line.startswith("Package:"):
                package, inside = line.split(":", 1)[1].strip(), False
            elif line.startswith(field):
                synopsis, inside = line[len(field) :].strip(), True
            elif inside and line.startswith(" "):
                body.append(line[1:])
            else:
                inside = False
        long = _join(body)
        if package and synopsis and long:
            yield Description(package, synopsis, long)


def _join(lines: list[str]) -> str:
    """A long description's lines as text: " ." separates paragraphs, wrapped lines join
    with a space, or with nothing between two CJK characters."""
    paragraphs, current = [], ""
    for line in lines:
        line = line.strip()
        if line == ".":
            if current:
                paragraphs.append(current)
            current = ""
            continue
        if current and not (CJK.match(current[-1]) and CJK.match(line[:1])):
            current += " "
        current += line
    if current:
        paragraphs.append(current)
    return "\n\n".join(paragraphs)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def build(
    descriptions: list[Description], docs: int, queries: int
) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    """(corpus id -> long description, query id -> synopsis, query id -> relevant ids).

    Packages in a fixed pseudo-random order (by a hash of the name); the corpus is the
    first ``docs`` distinct long descriptions, the queries the first ``queries`` distinct
    synopses among those packages. A synopsis that several packages share is relevant to
    each of their long descriptions."""
    ordered = sorted(descriptions, key=lambda d: _key(d.package))
    corpus: dict[str, str] = {}
    for d in ordered:
        doc_id = "d" + _key(d.long)
        if doc_id not in corpus and len(corpus) < docs:
            corpus[doc_id] = d.long
    relevant: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for d in ordered:
        doc_id = "d" + _key(d.long)
        if doc_id not in corpus or d.synopsis == d.long:
            continue
        query_id = "q" + _key(d.synopsis)
        if query_id in texts or len(texts) < queries:
            texts[query_id] = d.synopsis
            relevant.setdefault(query_id, set()).add(doc_id)
    return corpus, texts, relevant


def write(out: Path, corpus: dict[str, str], queries: dict[str, str], relevant: dict) -> None:
    """``out`` in BEIR layout (judged split: test)."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for doc_id, text in corpus.items():
            handle.write(
                json.dumps({"_id": doc_id, "title": "", "text": text}, ensure_ascii=False) + "\n"
            )
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for query_id, text in queries.items():
            handle.write(json.dumps({"_id": query_id, "text": text}, ensure_ascii=False) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for query_id, docs in relevant.items():
            for doc_id in sorted(docs):
                handle.write(f"{query_id}\t{doc_id}\t1\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path, help="folder with Translation-<lang> files")
    parser.add_argument("out", type=Path)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    args = parser.parse_args()
    for language in args.languages.split(","):
        text = (args.raw / f"Translation-{language}").read_text(encoding="utf-8")
        found = list(parse(text, language))
        corpus, queries, relevant = build(found, args.docs, args.queries)
        write(args.out / f"debian-{language}", corpus, queries, relevant)
        print(
            f"debian-{language}: {len(found)} packages, {len(corpus)} docs, {len(queries)} queries"
        )


if __name__ == "__main__":
    main()
