"""What a person typed, cut into the terms each index answers, and the raw query syntax.

Nothing here is any backend's syntax: the SQLite backend renders these parts as FTS5
expressions (backends/sqlite/word_index/fts.py), the PostgreSQL backend as ``tsquery``
(backends/postgres/text.py).

A natural-language query becomes an OR of its words (an implicit AND finds almost
nothing on real questions). Scripts written without spaces (Chinese, Japanese, Korean)
have no words to cut, so their text is indexed and searched as overlapping character
bigrams ("知识库" -> "知识" "识库"), an OR of them ranked by BM25: on CMRC 2018 dev that
ranks better than trigrams (nDCG@10 0.98 against 0.94, bench/keyword_quality.py). A
one-character CJK word has no bigram and is searched as a substring instead.

``raw=True`` reads the query in a small syntax of its own, parsed here once into a tree
(:data:`RawNode`); a query outside it is an ``InvalidQuery`` ("cannot parse the query").

==========================  =============================================================
``redis cache``             both words (words side by side: implicit AND)
``redis AND cache``         both
``redis OR kafka``          either
``redis NOT cache``         the first without the second
``( ... )``                 grouping
``"hit rate"``              the words in this order, next to each other (``""`` is a ``"``)
``runn*``, ``"hit ra"*``    a word starting so (of a phrase: its last word)
``NEAR(redis cache, 5)``    all of the words or phrases within 5 words of one another,
                            in any order (the distance is 10 if left out)
``head:redis``              in a field: ``head`` (the title and heading path a chunk is
                            indexed with) or ``text`` (the chunk's text); applies to a
                            word, phrase, prefix, ``NEAR(...)`` or ``( ... )``
==========================  =============================================================

Operators are upper case (``and`` is a word). Binding, tightest first: words side by side,
``NOT``, ``AND``, ``OR`` — so ``a NOT b c`` is ``a NOT (b c)`` and ``a OR b AND c`` is
``a OR (b AND c)`` (FTS5's precedence, so a query means what it meant when raw mode was
FTS5 syntax). A bare word is a run of letters, digits, ``_`` and any non-ASCII
character; anything else (``-``, ``.``, ``'``) must be inside a phrase. A query that holds
CJK text is answered by the CJK index, where each CJK word or phrase matches where the
text holds it unbroken. Backends differ where they must: PostgreSQL reads ``NEAR`` as
``AND`` and ignores fields (see backends/postgres/text.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NoReturn

from trove.errors import InvalidQuery
from trove.search.bounds import MAX_WORDS

# The CJK helpers live in trove.search.cjk (writing a chunk needs them, not this module's
# dataclasses); they stay importable from here.
from trove.search.cjk import _CJK as _CJK
from trove.search.cjk import _blank, _on_first_use, _segment_spans, has_cjk
from trove.search.cjk import blank_cjk as blank_cjk
from trove.search.cjk import cjk_grams as cjk_grams
from trove.search.cjk import cjk_segments as cjk_segments
from trove.search.cjk import cjk_text as cjk_text

# A query longer than this is refused (a pasted document is not a query); 1 MB queries put
# hundreds of thousands of OR terms into the index and held the one connection for minutes.
MAX_QUERY_CHARS = 10_000

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
    """The parts of one query, each ready for the index that can answer it.

    ``words`` are the words outside CJK text; ``cjk`` the CJK segments, lower-cased.
    ``raw`` is a raw query's tree (then the others are empty); ``raw_cjk`` says it holds
    CJK text, which the CJK index answers.
    """

    words: tuple[str, ...] = ()
    cjk: tuple[str, ...] = ()
    raw: RawNode | None = None
    raw_cjk: bool = False

    @property
    def length(self) -> int:
        """How many terms the query has: its words and its CJK bigrams (at least one per
        segment)."""
        return len(self.words) + sum(max(1, len(segment) - 1) for segment in self.cjk)

    @property
    def empty(self) -> bool:
        return not (self.words or self.cjk or self.raw is not None)

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

    def raw_terms(self) -> list[str]:
        """The text of every word and phrase of a raw query, in order (what snippets
        mark); none for a plain query."""
        return [] if self.raw is None else [p.text for p in phrases(self.raw)]


def parse(query: str, *, raw: bool = False) -> ParsedQuery:
    """Split a query into index terms. ``raw=True`` reads the raw syntax (see the module's
    docstring) into a tree: an ``InvalidQuery`` if it is not that syntax."""
    text = query.strip()
    if not text:
        return ParsedQuery()
    # Before the raw syntax is read: a raw query is bounded as a plain one is (100 KB of
    # raw ORs held the connection for minutes; FTS5 reads an OR in time growing with the
    # square of its terms).
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"query is {len(text):,} characters; the most a query may have is "
            f"{MAX_QUERY_CHARS:,} (search with its key passage instead)"
        )
    if raw:
        return ParsedQuery(raw=parse_raw(text), raw_cjk=has_cjk(text))
    spans = _segment_spans(text)
    segments = [text[a:b].lower() for a, b in spans]
    latin = _blank(text, spans)
    words = [w.lower() for w in _WORD.findall(latin)]
    content = [w for w in words if w not in STOPWORDS]
    return ParsedQuery(words=_unique(content or words), cjk=_unique(segments))


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# --- the raw query syntax -------------------------------------------------------------

# The fields a raw query may name (the word index's columns).
FIELDS = ("head", "text")
# NEAR(...)'s distance when none is given (FTS5's default).
NEAR_DISTANCE = 10
# Parentheses nested deeper than this are refused (the parser recurses).
MAX_NESTING = 100
# Words and phrases a raw query may have: as many as a plain query keeps (whose rarest
# words stand for it; a raw query's cannot be dropped without changing what it means).
# FTS5 reads an OR or AND of n terms in steps that each cost n, and a statement is
# stopped only between steps: 2,000 terms ran 9-33 s past the search's 5 s budget.
MAX_RAW_PHRASES = MAX_WORDS
_OPERATORS = ("AND", "OR", "NOT")
_STRING = re.compile(r'"(?:[^"]|"")*"')


_raw_token = _on_first_use(r'\s+|"(?:[^"]|"")*"|".*|[\w\x1a\u0080-\U0010ffff]+|.', re.DOTALL)
_bare = _on_first_use(r"[\w\x1a\u0080-\U0010ffff]+")


@dataclass(frozen=True)
class Phrase:
    """Words that must stand in this order (one word: just that word); ``prefix``: the
    last word may go on."""

    text: str
    prefix: bool = False


@dataclass(frozen=True)
class Near:
    """Phrases within ``distance`` words of one another, in any order."""

    phrases: tuple[Phrase, ...]
    distance: int = NEAR_DISTANCE


@dataclass(frozen=True)
class Field:
    """``node`` matched in one field only (one of :data:`FIELDS`)."""

    name: str
    node: RawNode


@dataclass(frozen=True)
class And:
    parts: tuple[RawNode, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[RawNode, ...]


@dataclass(frozen=True)
class Not:
    """What matches ``keep`` and not ``drop``."""

    keep: RawNode
    drop: RawNode


RawNode = Phrase | Near | Field | And | Or | Not


def phrases(node: RawNode) -> Iterator[Phrase]:
    """Every phrase of a raw query tree, in order (kept and dropped alike)."""
    if isinstance(node, Phrase):
        yield node
    elif isinstance(node, Near):
        yield from node.phrases
    elif isinstance(node, Field):
        yield from phrases(node.node)
    elif isinstance(node, Not):
        yield from phrases(node.keep)
        yield from phrases(node.drop)
    else:
        for part in node.parts:
            yield from phrases(part)


def parse_raw(text: str) -> RawNode:
    """The tree of a raw query; ``InvalidQuery`` ("cannot parse the query: ...") if it
    is not the syntax."""
    return _RawParser(text).tree


class _RawParser:
    """Recursive descent, one method per level of binding (loosest first)."""

    def __init__(self, text: str) -> None:
        self.tokens = [t for t in _raw_token().findall(text) if not t.isspace()]
        self.at = 0
        self.depth = 0
        self.phrases = 0
        if not self.tokens:
            raise InvalidQuery("cannot parse the query: it is empty")
        self.tree = self._or()
        if self.at < len(self.tokens):
            self._fail()

    def _peek(self, ahead: int = 0) -> str | None:
        at = self.at + ahead
        return self.tokens[at] if at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            self._fail()
        self.at += 1
        return token

    def _fail(self, why: str = "") -> NoReturn:
        if not why:
            token = self._peek()
            why = "syntax error " + (f"near {token!r}" if token is not None else "at the end")
        raise InvalidQuery(f"cannot parse the query: {why}")

    def _or(self) -> RawNode:
        parts = [self._and()]
        while self._peek() == "OR":
            self._take()
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def _and(self) -> RawNode:
        parts = [self._not()]
        while self._peek() == "AND":
            self._take()
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def _not(self) -> RawNode:
        node = self._sequence()
        while self._peek() == "NOT":
            self._take()
            node = Not(node, self._sequence())
        return node

    def _sequence(self) -> RawNode:
        """Units side by side (an implicit AND, binding tighter than any operator)."""
        parts = [self._unit()]
        while self._peek() not in (None, ")", *_OPERATORS):
            parts.append(self._unit())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def _unit(self) -> RawNode:
        token = self._peek()
        if token is not None and self._peek(1) == ":" and _bare().fullmatch(token):
            name = token.lower()
            if name not in FIELDS:
                self._fail(f"unknown field {token!r} (fields: {', '.join(FIELDS)})")
            self.at += 2
            return Field(name, self._target())
        return self._target()

    def _target(self) -> RawNode:
        if self._peek() == "(":
            self._take()
            self.depth += 1
            if self.depth > MAX_NESTING:
                self._fail(f"parentheses nested deeper than {MAX_NESTING}")
            node = self._or()
            self._take(")")
            self.depth -= 1
            return node
        if self._peek() == "NEAR" and self._peek(1) == "(":
            return self._near()
        return self._phrase()

    def _near(self) -> Near:
        self.at += 2
        found = [self._phrase()]
        while self._peek() not in (")", ",", None):
            found.append(self._phrase())
        distance = NEAR_DISTANCE
        if self._peek() == ",":
            self._take()
            if not (self._peek() or "").isdigit():
                self._fail(f"NEAR's distance must be a whole number, not {self._peek()!r}")
            distance = int(self._take())
        self._take(")")
        return Near(tuple(found), distance)

    def _phrase(self) -> Phrase:
        token = self._peek()
        if token is None or token in _OPERATORS:
            self._fail()
        if token.startswith('"'):
            if not _STRING.fullmatch(token):
                raise InvalidQuery("cannot parse the query: unterminated string")
            text = token[1:-1].replace('""', '"')
        elif _bare().fullmatch(token):
            text = token
        else:
            self._fail()
        self.phrases += 1
        if self.phrases > MAX_RAW_PHRASES:
            self._fail(f"more than {MAX_RAW_PHRASES} words and phrases (search with fewer)")
        self.at += 1
        prefix = self._peek() == "*"
        if prefix:
            self._take()
        return Phrase(text, prefix)
