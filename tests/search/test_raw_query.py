"""The raw query syntax (trove.search.query): parsed once into a tree, rendered as FTS5
(backends/sqlite/word_index/fts.py) with the same matches FTS5 gives the typed text."""

from __future__ import annotations

import random

import apsw
import pytest

from trove.backends.sqlite.word_index.fts import raw_match, word_match
from trove.errors import InvalidQuery
from trove.search.query import And, Field, Near, Not, Or, Phrase, parse, parse_raw


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("redis", Phrase("redis")),
        ("runn*", Phrase("runn", prefix=True)),
        ('"hit ""rate"""*', Phrase('hit "rate"', prefix=True)),
        ("a b", And((Phrase("a"), Phrase("b")))),
        ("a NOT b c", Not(Phrase("a"), And((Phrase("b"), Phrase("c"))))),
        ("a OR b AND c", Or((Phrase("a"), And((Phrase("b"), Phrase("c")))))),
        ("a NOT b NOT c", Not(Not(Phrase("a"), Phrase("b")), Phrase("c"))),
        ('NEAR(a "b c", 3)', Near((Phrase("a"), Phrase("b c")), 3)),
        ("NEAR(a b)", Near((Phrase("a"), Phrase("b")), 10)),
        ("TEXT:(a OR b)", Field("text", Or((Phrase("a"), Phrase("b"))))),
        ("head:NEAR(a b)", Field("head", Near((Phrase("a"), Phrase("b"))))),
        ("NEAR", Phrase("NEAR")),
        ("(a) b", And((Phrase("a"), Phrase("b")))),
    ],
)
def test_the_syntax_parses_to_its_tree(text: str, tree: object) -> None:
    assert parse_raw(text) == tree


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('"open', "unterminated string"),
        ("AND", "syntax error near 'AND'"),
        ("a OR", "syntax error at the end"),
        ("(a", "syntax error at the end"),
        ("a)", "syntax error near ')'"),
        ("NOT a", "syntax error near 'NOT'"),
        ("title:a", "unknown field 'title' (fields: head, text)"),
        ("a - b", "syntax error near '-'"),
        ("NEAR(a b, x)", "NEAR's distance must be a whole number, not 'x'"),
        ("NEAR()", "syntax error near ')'"),
        ("(" * 101 + "a" + ")" * 101, "parentheses nested deeper than 100"),
    ],
)
def test_what_is_not_the_syntax_is_invalid_query(text: str, why: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        parse_raw(text)
    assert str(caught.value) == f"cannot parse the query: {why}"


def test_a_plain_query_renders_as_an_or_of_strings() -> None:
    assert word_match(parse('say "hi" OR bye')) == '"say" OR "hi" OR "bye"'


def test_cjk_phrases_become_gram_phrases_and_fields_drop_in_the_cjk_index() -> None:
    assert raw_match(parse_raw("text:知识库* NOT x"), cjk=True) == '("知识 识库"*) NOT ("x")'


def _phrase(rng: random.Random) -> str:
    words = ["a", "b", "c", "d", "ab"]
    if rng.random() < 0.2:
        inner = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
        return f"NEAR({inner}, {rng.randint(0, 4)})"
    term = rng.choice(words)
    if rng.random() < 0.2:
        term = '"' + " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) + '"'
    term += "*" if rng.random() < 0.15 else ""
    return (rng.choice(["head:", "text:"]) if rng.random() < 0.15 else "") + term


def _query(rng: random.Random, depth: int = 0) -> str:
    if depth > 2 or rng.random() < 0.4:  # FTS5 puts words side by side, not groups
        return " ".join(_phrase(rng) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.2:
        return f"({_query(rng, depth + 1)})"
    operator = rng.choice(["AND", "OR", "NOT"])
    return f"{_query(rng, depth + 1)} {operator} {_query(rng, depth + 1)}"


def test_the_fts5_rendering_matches_what_fts5_matched_for_the_typed_text() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (head, text, tokenize='porter unicode61')")
    rng = random.Random(13)
    words = ["a", "b", "c", "d", "ab", "abc"]
    for row in range(1, 300):
        head = " ".join(rng.choice(words) for _ in range(rng.randint(0, 3)))
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        conn.execute("INSERT INTO t (rowid, head, text) VALUES (?, ?, ?)", (row, head, text))

    def rows(match: str) -> list[int]:
        return [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,))]

    for _ in range(500):
        typed = _query(rng)
        rendered = word_match(parse(typed, raw=True))
        assert rendered is not None
        assert sorted(rows(rendered)) == sorted(rows(typed)), (typed, rendered)
