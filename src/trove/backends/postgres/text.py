"""Text for PostgreSQL full-text search, prepared in Python so both backends agree.

Words are cut here with the same rule as the query parser (runs of letters and digits),
lower-cased and stripped of Latin diacritics, and only then handed to PostgreSQL, whose
job is stemming. So "example.org" is two words on both backends, whatever the server's
parser or locale would make of it. Chinese, Japanese and Korean runs become character
unigrams and bigrams, written straight into a second ``tsvector`` (no extension needed).

Everything that reaches PostgreSQL's text-search syntax is built here from lexemes with
:func:`quote`; user text is never spliced into SQL or into a query string unquoted.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# The query parser's segmentation (a run of letters/digits containing CJK), shared so the
# index and the query cut text identically.
from trove.search.query import (
    Field,
    Near,
    Not,
    Or,
    ParsedQuery,
    Phrase,
    RawNode,
    blank_cjk,
    cjk_segments,
    has_cjk,
    parse_raw,
    phrases,
)

WORD = re.compile(r"[^\W_]+")

# PostgreSQL text cannot hold NUL, which trove must store byte for byte. Strings are
# escaped on the way in: U+10FFFF (a noncharacter) is doubled as ESC "1", NUL becomes
# ESC "0"; strings without either (nearly all) pass through untouched.
ESC = "\U0010ffff"
_UNESCAPE = re.compile(ESC + "([01])")


def esc(value: str) -> str:
    if "\x00" not in value and ESC not in value:
        return value
    return value.replace(ESC, ESC + "1").replace("\x00", ESC + "0")


def unesc(value: str) -> str:
    if ESC not in value:
        return value
    return _UNESCAPE.sub(lambda m: ESC if m.group(1) == "1" else "\x00", value)


def filterable(value: Any) -> Any:
    """JSON that jsonb accepts, for filters: strings escaped like columns (jsonb refuses
    NUL), non-finite numbers as null (jsonb has no NaN)."""
    if isinstance(value, str):
        return esc(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {esc(str(k)): filterable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [filterable(v) for v in value]
    return value


def fold(word: str) -> str:
    """Lower case without Latin diacritics (like FTS5's ``remove_diacritics 2``)."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(_base(char) for char in word)


def _base(char: str) -> str:
    code = ord(char)
    if code < 0x250 or 0x1E00 <= code <= 0x1EFF:  # Latin blocks only: keep Hangul, Indic ...
        return unicodedata.normalize("NFD", char)[0]
    return char


def words(text: str) -> list[str]:
    """The folded words of ``text`` outside CJK runs, in order."""
    return [fold(w) for w in WORD.findall(blank_cjk(text) if has_cjk(text) else text)]


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, folded word) for each word of ``text`` outside CJK runs."""
    if has_cjk(text):
        text = blank_cjk(text, keep_offsets=True)
    lowered = text.lower()
    if len(lowered) != len(text):  # lower() changed lengths (rare): fold word by word
        return [(m.start(), m.end(), fold(m.group())) for m in WORD.finditer(text)]
    return [
        (m.start(), m.end(), w if w.isascii() else fold(w))
        for m in WORD.finditer(lowered)
        for w in (m.group(),)
    ]


def grams(text: str) -> list[str]:
    """Unigrams of CJK characters and bigrams of each CJK run, in text order."""
    found: list[str] = []
    if not has_cjk(text):  # one scan in C, where the segmenting walks every block
        return found
    for segment in cjk_segments(text):
        segment = segment.lower()
        for i, char in enumerate(segment):
            if has_cjk(char):
                found.append(char)
            pair = segment[i : i + 2]
            if len(pair) == 2 and has_cjk(pair):
                found.append(pair)
    return found


def query_grams(query: ParsedQuery) -> list[str]:
    """Gram tokens for the CJK part of a parsed query: its bigrams, one-character runs whole."""
    tokens = list(query.bigrams())
    tokens += [s.lower() for s in query.substrings]
    return list(dict.fromkeys(tokens))


def quote(lexeme: str) -> str:
    """A lexeme as a ``tsvector``/``tsquery`` literal: always quoted, quotes and
    backslashes escaped, so no character of it is read as an operator."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector(tokens: Sequence[str]) -> str:
    """A ``tsvector`` literal of ``tokens`` with their positions (1-based, capped as
    PostgreSQL caps them), so term frequencies survive for ranking."""
    positions: dict[str, list[int]] = {}
    for at, token in enumerate(tokens, 1):
        if token:
            positions.setdefault(token, []).append(min(at, 16383))
    return " ".join(
        f"{quote(t)}:{','.join(str(p) for p in dict.fromkeys(ps[:256]))}"
        for t, ps in positions.items()
    )


def or_query(lexemes: Iterable[str]) -> str:
    return " | ".join(quote(lex) for lex in dict.fromkeys(lexemes) if lex)


# --- raw mode: the raw query tree as a tsquery ----------------------------------------


class RawQuery:
    """A raw query (the syntax of :mod:`trove.search.query`, or its parsed tree) as a
    PostgreSQL ``tsquery`` over one of the two vectors (words, or CJK grams).

    What ``tsquery`` cannot say exactly: ``NEAR(...)`` is read as AND (``<N>`` means
    exactly N positions apart, in order, where NEAR means within N, in any order), and
    fields are ignored (one vector per chunk holds its head and text together). A phrase
    is its words at consecutive positions (``<->``); a prefix applies to its last word.
    """

    def __init__(self, raw: str | RawNode) -> None:
        self.tree = parse_raw(raw) if isinstance(raw, str) else raw

    def phrases(self) -> list[Phrase]:
        return list(phrases(self.tree))

    def tsquery(self, stems: Mapping[str, Sequence[str]], cjk: bool) -> str | None:
        """The expression as ``tsquery`` text; ``stems`` maps folded words to lexemes."""
        return _emit(self.tree, stems, cjk)


def _emit(node: RawNode, stems: Mapping[str, Sequence[str]], cjk: bool) -> str | None:
    if isinstance(node, Phrase):
        return _phrase_query(node, stems, cjk)
    if isinstance(node, Field):
        return _emit(node.node, stems, cjk)
    if isinstance(node, Not):
        left, right = _emit(node.keep, stems, cjk), _emit(node.drop, stems, cjk)
        if left is None:
            return None
        return left if right is None else f"({left}) & !({right})"
    parts = [
        _emit(part, stems, cjk)
        for part in (node.phrases if isinstance(node, Near) else node.parts)
    ]
    present = [p for p in parts if p is not None]
    conjunction = not isinstance(node, Or)
    if conjunction and len(present) < len(parts):
        return None  # a part that cannot match makes the AND unmatchable
    if not present:
        return None
    joiner = " & " if conjunction else " | "
    return joiner.join(f"({p})" for p in present)


def _phrase_query(phrase: Phrase, stems: Mapping[str, Sequence[str]], cjk: bool) -> str | None:
    if cjk:
        tokens = grams(phrase.text)
        bigrams = [t for t in tokens if len(t) == 2] or tokens
        return " & ".join(quote(t) for t in dict.fromkeys(bigrams)) or None
    folded = words(phrase.text)
    if not folded:
        return None
    pieces: list[str] = []
    for i, word in enumerate(folded):
        if phrase.prefix and i == len(folded) - 1:
            pieces.append(f"{quote(word)}:*")
            continue
        lexemes = stems.get(word, ())
        if not lexemes:
            return None
        pieces.append(" & ".join(quote(lex) for lex in lexemes))
    return " <-> ".join(f"({p})" if " & " in p else p for p in pieces)


def raw_words(raw: RawQuery) -> list[str]:
    """Every folded word of a raw query (what needs stems from the server)."""
    return list(dict.fromkeys(w for p in raw.phrases() for w in words(p.text)))


def candidate_spans(text: str, starts: set[str]) -> list[tuple[int, int, str]]:
    """(start, end, folded word) for the words of ``text`` that may stem as one of
    ``starts`` (the query's words, or their lexemes) does. English stemming rewrites
    endings, so a word and its stem share their first letters; only words that start like
    one of ``starts`` are worth asking the server about.
    """
    heads = {word[:3] for word in starts if word}
    if not heads:
        return []
    if not text.isascii():
        return [span for span in word_spans(text) if span[2][:3] in heads]
    pattern = _starting_with(frozenset(heads))
    return [(m.start(), m.end(), m.group()) for m in pattern.finditer(text.lower())]


@functools.lru_cache(maxsize=256)
def _starting_with(heads: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(h) for h in sorted(heads, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})[^\W_]*")


def mark_spans(
    spans: Iterable[tuple[int, int, str]],
    lexemes_of: Mapping[str, Sequence[str]],
    wanted: set[str],
) -> list[tuple[int, int]]:
    """The spans whose word stems to a wanted lexeme."""
    return [(s, e) for s, e, w in spans if w in lexemes_of and wanted.intersection(lexemes_of[w])]
