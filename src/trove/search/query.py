"""Turn what a person typed into FTS5 expressions that cannot be misread as syntax.

A natural-language query becomes an OR of its words (an implicit AND finds almost
nothing on real questions). Scripts written without spaces (Chinese, Japanese, Korean)
have no words to cut, so their text is indexed and searched as overlapping character
bigrams ("知识库" -> "知识" "识库"), an OR of them ranked by BM25: on CMRC 2018 dev that
ranks better than trigrams (nDCG@10 0.98 against 0.94, bench/keyword_quality.py). A
one-character CJK word has no bigram and is searched as a substring instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trove.errors import InvalidQuery

# A query longer than this is refused (a pasted document is not a query); 1 MB queries put
# hundreds of thousands of OR terms into the index and held the one connection for minutes.
MAX_QUERY_CHARS = 10_000

# Han (with extensions and compatibility forms), kana, Hangul, half-width kana.
_CJK = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uff66-\uff9d\U00020000-\U0002fa1f"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
# A "segment" is a run of letters/digits that contains CJK ("战国无双3"); its grams are
# its two-character windows that hold CJK, and the letters or digits written against CJK
# kept whole ("3"). On CMRC 2018 that beats bigrams of CJK alone (nDCG@10 trial 0.977
# against 0.971) and CJK bigrams with whole pieces but no windows across them (0.976).
_CJK_SEGMENT = re.compile(rf"[^\W_]*[{_CJK}][^\W_]*")
# Segments are looked for only inside blocks of letters, digits and CJK (no segment
# crosses anything else) that hold CJK: run over a long word without CJK, the segment
# pattern backtracks from every start (8,000 letters took 1.8 s), a block pattern cannot.
_BLOCK = re.compile(rf"(?:[^\W_]|[{_CJK}])+")
_NON_CJK = re.compile(rf"[^{_CJK}]+")
_WORD = re.compile(r"[^\W_]+")
# In raw FTS5 syntax: a "string" (quotes doubled inside) or a bare word.
_RAW_TERM = re.compile(r'"(?:[^"]|"")*"|[^\s"()*+:^,{}-]+')

# Lucene's English stop set: frequent words that only add noise to an OR query.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)


@dataclass(frozen=True)
class ParsedQuery:
    """The parts of one query, each ready for the index that can answer it.

    ``words`` are the words outside CJK text; ``cjk`` the CJK segments, lower-cased.
    """

    words: tuple[str, ...] = ()
    cjk: tuple[str, ...] = ()
    raw: str | None = None
    raw_cjk: bool = False

    @property
    def length(self) -> int:
        """How many terms the query has: its words and its CJK bigrams (at least one per
        segment)."""
        return len(self.words) + sum(max(1, len(segment) - 1) for segment in self.cjk)

    @property
    def empty(self) -> bool:
        return not (self.words or self.cjk or self.raw)

    def word_match(self) -> str | None:
        """FTS5 expression for the word index, or None when there are no words."""
        if self.raw is not None:
            return None if self.raw_cjk else self.raw
        return _or(self.words)

    def cjk_match(self) -> str | None:
        """FTS5 expression for the CJK bigram index: an OR of the grams of every segment
        that has a bigram (one-character segments are :attr:`substrings`)."""
        if self.raw is not None:
            return raw_cjk_match(self.raw) if self.raw_cjk else None
        grams = [g for s in self.cjk if len(s) > 1 for g in cjk_grams(s)]
        return _or(_unique(grams))

    @property
    def substrings(self) -> tuple[str, ...]:
        """CJK segments of one character: no bigram holds them, so they are looked up as
        substrings of the text."""
        return tuple(s for s in self.cjk if len(s) == 1)

    def cjk_runs(self) -> list[str]:
        """CJK segments longer than one character (what snippets mark besides
        :attr:`substrings`)."""
        return [s for s in self.cjk if len(s) > 1]

    def bigrams(self) -> tuple[str, ...]:
        """Every two-character window of the segments that holds CJK ("双3" too): the
        PostgreSQL backend's gram terms."""
        grams = {s[i : i + 2] for s in self.cjk for i in range(len(s) - 1)}
        return tuple(sorted(g for g in grams if has_cjk(g)))


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def cjk_grams(text: str) -> list[str]:
    """The CJK index terms of ``text``, in order: each two-character window of a CJK
    segment that holds CJK ("战国无双3" -> "战国" "国无" "无双" "双3"), and the letters or
    digits written against CJK as whole pieces ("3"); a segment of one character stays
    whole. Words that stand apart from CJK text are the word index's."""
    grams: list[str] = []
    for start, end in _segment_spans(text):
        segment = text[start:end].lower()
        if len(segment) == 1:
            grams.append(segment)
            continue
        pieces = {m.start(): m.group() for m in _NON_CJK.finditer(segment)}
        if not pieces:
            grams.extend(segment[i : i + 2] for i in range(len(segment) - 1))
            continue
        for i in range(len(segment)):
            if i in pieces:
                grams.append(pieces[i])
            pair = segment[i : i + 2]
            if len(pair) == 2 and has_cjk(pair):
                grams.append(pair)
    return grams


def cjk_text(head: str, text: str) -> str | None:
    """What a chunk writes into the CJK bigram index, or None when it has no CJK."""
    if not (has_cjk(text) or has_cjk(head)):
        return None
    return " ".join(cjk_grams(head + "\n" + text))


def raw_cjk_match(raw: str) -> str:
    """Raw FTS5 syntax for the CJK bigram index: every string or bare word that holds CJK
    becomes the phrase of its grams, which matches where the text holds it unbroken;
    operators, other words, prefixes and NEAR pass through."""

    def rewrite(match: re.Match[str]) -> str:
        term = match.group()
        if not has_cjk(term):
            return term
        inner = term[1:-1].replace('""', '"') if term.startswith('"') else term
        return quote(" ".join(cjk_grams(inner)) or inner)

    return _RAW_TERM.sub(rewrite, raw)


def parse(query: str, *, raw: bool = False) -> ParsedQuery:
    """Split a query into index terms. ``raw=True`` passes FTS5 syntax through untouched."""
    text = query.strip()
    if not text:
        return ParsedQuery()
    if raw:
        return ParsedQuery(raw=text, raw_cjk=has_cjk(text))
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"query is {len(text):,} characters; the most a query may have is "
            f"{MAX_QUERY_CHARS:,} (search with its key passage instead)"
        )
    spans = _segment_spans(text)
    segments = [text[a:b].lower() for a, b in spans]
    latin = _blank(text, spans)
    words = [w.lower() for w in _WORD.findall(latin)]
    content = [w for w in words if w not in STOPWORDS]
    return ParsedQuery(words=_unique(content or words), cjk=_unique(segments))


def cjk_segments(text: str) -> list[str]:
    """The CJK segments of ``text`` (runs of letters and digits that hold CJK), in order."""
    return [text[a:b] for a, b in _segment_spans(text)]


def blank_cjk(text: str, *, keep_offsets: bool = False) -> str:
    """``text`` with each CJK segment replaced by one space (or by as many as it has
    characters, ``keep_offsets``), leaving the words written apart from CJK."""
    return _blank(text, _segment_spans(text), keep_offsets)


def _segment_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each CJK segment of ``text``, in linear time."""
    spans = []
    for block in _BLOCK.finditer(text):
        if has_cjk(block.group()):
            for m in _CJK_SEGMENT.finditer(text, block.start(), block.end()):
                spans.append(m.span())
    return spans


def _blank(text: str, spans: list[tuple[int, int]], keep_offsets: bool = False) -> str:
    parts, at = [], 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(" " * (end - start) if keep_offsets else " ")
        at = end
    parts.append(text[at:])
    return "".join(parts)


def quote(term: str) -> str:
    """An FTS5 string literal: the term is matched as text, never parsed as syntax."""
    return '"' + term.replace('"', '""') + '"'


def _or(terms: tuple[str, ...]) -> str | None:
    return " OR ".join(quote(t) for t in terms) if terms else None


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
