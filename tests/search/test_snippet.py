"""Snippet spans of ASCII text found without tokenizing it (search/snippet.py): the same
spans as the word index's tokenizer gives, for every word porter can stem."""

from __future__ import annotations

import random

import apsw
import pytest

from trove.backends.sqlite.schema import word_tokenizer
from trove.search import snippet

# Words whose stems porter writes itself (y -> i, a final e, "-biliti" -> "-bl"), cuts
# hard ("abfulness" -> "ab") or leaves alone (short words, digits).
TRICKY = (
    "happy", "happiness", "hoping", "hope", "hopping", "filing", "eyed", "used", "ies",
    "flies", "possibility", "possibly", "sensibility", "sensitivity", "relational",
    "rational", "conflated", "formalization", "realizing", "frequency", "entirely",
    "radically", "digitizer", "probability", "abfulness", "generalizations", "agreed",
    "feed", "bus", "has", "its", "a", "i", "t", "ht", "p53", "0", "42", "co2", "x86", "il",
    "interleukin", "cells", "cell", "cellular", "running", "runs", "ran", "runner",
    "indexes", "index", "indices", "biomaterials", "inductive", "properties",
)  # fmt: skip
SUFFIXES = (
    "", "s", "es", "ies", "ed", "ing", "eed", "y", "ly", "ness", "ful", "fulness",
    "ational", "biliti", "ility", "ization", "iveness", "ousli", "ement", "ate", "ism",
    "ence", "ance", "able", "ible", "ant", "ent", "ion", "ou", "ive", "ize", "al", "er",
)  # fmt: skip


@pytest.fixture(scope="module")
def tokenize():
    conn = apsw.Connection(":memory:")
    tokenizer = word_tokenizer(conn)

    def run(data: bytes) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = tokenizer(
            data, apsw.FTS5_TOKENIZE_DOCUMENT, None, include_colocated=False
        )
        return found

    yield run
    conn.close()


def words(count: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    made = list(TRICKY)
    for _ in range(count):
        stem = "".join(rnd.choice("aeiouybcdlmnrstgzv") for _ in range(rnd.randint(1, 9)))
        made.append(stem + rnd.choice(SUFFIXES))
    return made


def stem_of(tokenize, word: str) -> str:
    tokens = tokenize(word.encode())
    assert len(tokens) == 1
    return str(tokens[0][2])


def test_a_stem_starts_its_word_but_for_a_rewritten_last_letter(tokenize) -> None:
    # What ascii_word_intervals relies on to look only at words that start like a term.
    for word in words(20_000):
        stem = stem_of(tokenize, word)
        start = stem[:-1] if stem[-1] in "eil" and len(stem) > 1 else stem
        assert word.startswith(start), (word, stem)


def test_ascii_spans_are_the_tokenizers(tokenize) -> None:
    rnd = random.Random(3)
    vocabulary = words(400)
    separators = [" ", "  ", "-", ", ", ".\n", "(", ") ", "/", "'", "_", "\t", "\x00", ""]
    # Outside ASCII: separators (dash, degree, plus-minus, no-break space, a symbol newer
    # than SQLite's tables) and letters or marks that join or split words.
    separators += ["\u2013", " \u00b0C ", "\u00b1", "\u00a0", "\u058d"]
    joiners = ["\u03b1", "\u00e9", "\u0301", "\u4e2d"]
    cache: dict[str, str] = {}

    def normalize(found):
        for word in found:
            cache.setdefault(word, stem_of(tokenize, word))
        return cache

    def separates(char: str) -> bool:
        return [t for _, _, t in tokenize(f"a{char}b".encode())] == ["a", "b"]

    for _ in range(300):
        texts = []
        for _ in range(rnd.randint(1, 4)):
            between = separators + (joiners if rnd.random() < 0.3 else [])
            parts = []
            for _ in range(rnd.randint(0, 40)):
                word = rnd.choice(vocabulary)
                parts.append(word.upper() if rnd.random() < 0.1 else word.capitalize())
                parts.append(rnd.choice(between))
            texts.append("".join(parts))
        query = [stem_of(tokenize, w) for w in rnd.sample(vocabulary, rnd.randint(1, 6))]
        fast = snippet.ascii_word_intervals(normalize, texts, query, separates)
        for text, spans in zip(texts, fast, strict=True):
            if spans is not None:
                assert spans == snippet.word_intervals(tokenize, text, query), text
            else:  # a letter or mark outside ASCII: left to the tokenizer
                assert any(not c.isascii() and not separates(c) for c in text), text


def test_text_with_words_outside_ascii_is_left_to_the_tokenizer() -> None:
    texts = ["café cell", "cell, cells", "cell \u2013 cell"]
    found = snippet.ascii_word_intervals(
        lambda ws: {w: w for w in ws}, texts, ["cell", "café"], lambda c: c == "\u2013"
    )
    assert found == [None, [(0, 4)], [(0, 4), (7, 11)]]
