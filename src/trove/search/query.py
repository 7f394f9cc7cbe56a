"""Turn what a person typed into FTS5 expressions that cannot be misread as syntax.

A natural-language query becomes an OR of its words (an implicit AND finds almost
nothing on real questions). Words in scripts written without spaces (Chinese, Japanese,
Korean) go to the trigram index as an OR of their trigrams; runs shorter than three
characters cannot be matched by trigrams and are searched as substrings instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Han (with extensions and compatibility forms), kana, Hangul, half-width kana.
_CJK = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uff66-\uff9d\U00020000-\U0002fa1f"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
# A "segment" is a run of letters/digits that contains CJK; it is cut into trigrams whole,
# so "战国无双3" keeps the digit next to the characters it follows.
_CJK_SEGMENT = re.compile(rf"[^\W_]*[{_CJK}][^\W_]*")
_WORD = re.compile(r"[^\W_]+")

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
    """The parts of one query, each ready for the index that can answer it."""

    words: tuple[str, ...] = ()
    trigrams: tuple[str, ...] = ()
    substrings: tuple[str, ...] = ()
    raw: str | None = None
    raw_cjk: bool = False

    @property
    def empty(self) -> bool:
        return not (self.words or self.trigrams or self.substrings or self.raw)

    def word_match(self) -> str | None:
        """FTS5 expression for the word index, or None when there are no words."""
        if self.raw is not None:
            return None if self.raw_cjk else self.raw
        return _or(self.words)

    def trigram_match(self) -> str | None:
        if self.raw is not None:
            return self.raw if self.raw_cjk else None
        return _or(self.trigrams)

    def cjk_runs(self) -> list[str]:
        """The CJK runs the trigrams came from, glued back from their overlaps."""
        runs: list[str] = []
        for gram in self.trigrams:
            if runs and runs[-1][-2:] == gram[:2]:
                runs[-1] += gram[2]
            else:
                runs.append(gram)
        return runs

    def bigrams(self) -> tuple[str, ...]:
        """CJK bigrams, a substring fallback when no trigram of the query occurs."""
        grams = {t[:2] for t in self.trigrams} | {t[1:] for t in self.trigrams}
        return tuple(sorted(g for g in grams if has_cjk(g)))

    def latin_trigram_match(self) -> str | None:
        """Substring fallback for Latin words (partial identifiers, typos of suffixes)."""
        grams = [w for w in self.words if len(w) >= 3]
        return _or(tuple(grams)) if grams else None


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def parse(query: str, *, raw: bool = False) -> ParsedQuery:
    """Split a query into index terms. ``raw=True`` passes FTS5 syntax through untouched."""
    text = query.strip()
    if not text:
        return ParsedQuery()
    if raw:
        return ParsedQuery(raw=text, raw_cjk=has_cjk(text))
    trigrams: list[str] = []
    substrings: list[str] = []
    for segment in _CJK_SEGMENT.findall(text):
        segment = segment.lower()
        if len(segment) < 3:
            substrings.append(segment)
        else:
            trigrams.extend(segment[i : i + 3] for i in range(len(segment) - 2))
    latin = _CJK_SEGMENT.sub(" ", text)
    words = [w.lower() for w in _WORD.findall(latin)]
    content = [w for w in words if w not in STOPWORDS]
    return ParsedQuery(
        words=_unique(content or words),
        trigrams=_unique(trigrams),
        substrings=_unique(substrings),
    )


def quote(term: str) -> str:
    """An FTS5 string literal: the term is matched as text, never parsed as syntax."""
    return '"' + term.replace('"', '""') + '"'


def _or(terms: tuple[str, ...]) -> str | None:
    return " OR ".join(quote(t) for t in terms) if terms else None


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
