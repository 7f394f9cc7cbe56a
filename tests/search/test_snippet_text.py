"""Snippets from clean text: no front matter, no markup, comments not searchable."""

from __future__ import annotations

import random

import trove
from trove.search.snippet_text import (
    _COMMENT,
    _EMPHASIS,
    _HEADING,
    _LINK,
    _PIPES,
    _SPACES,
    _TABLE_RULE,
    _WIKI,
    clean,
    mask,
)

NOTE = """---
title: Cache decision
author: ana
tags: [infra, redis]
---
# Why we dropped Redis

We **dropped** [[Redis|the Redis cache]] after the [review](docs/review.md).
<!-- secret: the budget spreadsheet lives in finance -->

| option | cost |
|---|---|
| redis | high |
"""


def test_front_matter_is_never_indexed_nor_shown(kb: trove.Store, tmp_path) -> None:
    (tmp_path / "cache.md").write_text(NOTE, encoding="utf-8")
    kb.ingest(tmp_path)
    assert kb.search("title author tags") == []  # its keys match nothing
    (hit,) = kb.search("dropped redis")
    assert "---" not in hit.snippet and "author:" not in hit.snippet
    assert hit.title == "Cache decision" and "infra" in hit.tags  # values fill fields
    assert kb.get(hit.doc_id).text == NOTE  # get stays byte-exact


def test_html_comments_are_not_searchable(kb: trove.Store, tmp_path) -> None:
    (tmp_path / "cache.md").write_text(NOTE, encoding="utf-8")
    kb.ingest(tmp_path)
    assert kb.search("spreadsheet finance") == []


def test_snippets_and_text_have_no_markdown_markup(kb: trove.Store, tmp_path) -> None:
    (tmp_path / "cache.md").write_text(NOTE, encoding="utf-8")
    kb.ingest(tmp_path)
    (hit,) = kb.search("dropped review", with_text=True)
    for shown in (hit.snippet, hit.text or ""):
        for markup in ("**", "[[", "]]", "](", "|", "<!--"):
            assert markup not in shown, (markup, shown)
    assert "the Redis cache" in (hit.text or "")


def test_mask_keeps_offsets_and_lines() -> None:
    masked = mask(NOTE, "markdown")
    assert len(masked) == len(NOTE) and masked.count("\n") == NOTE.count("\n")
    assert "author" not in masked and "secret" not in masked
    assert mask(NOTE, "text") == NOTE  # only Markdown has front matter


def test_clean_folds_the_spaces_of_prose_as_its_pattern_does() -> None:
    # Prose without a double space or a tab skips the pattern: same answer as with it.
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("ab \t\n…«»") for _ in range(rng.randint(0, 12)))
        assert clean(text) == _SPACES.sub(" ", text).strip()


def test_clean_runs_only_the_patterns_that_can_match() -> None:
    # Each pattern is skipped where the text lacks what it needs: same answer as all.
    patterns = (_COMMENT, _WIKI, _LINK, _EMPHASIS, _HEADING, _TABLE_RULE, _PIPES, _SPACES)
    replacements = (" ", None, r"\1", "", r"\1", " ", " ", " ")
    rng = random.Random(5)
    for _ in range(5000):
        text = "".join(rng.choice("a <!->[]()|*_~`#:\t\n…") for _ in range(rng.randint(0, 14)))
        expected = text
        for pattern, replacement in zip(patterns, replacements, strict=True):
            if replacement is None:  # a wiki link: its shown text
                expected = pattern.sub(lambda m: (m.group(2) or m.group(1)).strip(), expected)
            else:
                expected = pattern.sub(replacement, expected)
        assert clean(text) == expected.strip(), repr(text)


def test_clean_strips_markup() -> None:
    assert clean("We **dropped** [[Redis]] via [the review](x.md).") == (
        "We dropped Redis via the review."
    )
    assert clean("| a | b |\n|---|---|\n| 1 | 2 |") == "a b 1 2"
    assert clean("a <!-- hidden --> b") == "a b"
