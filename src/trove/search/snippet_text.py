"""Clean text: what is indexed and shown of a Markdown document, offsets kept.

A Markdown file is stored whole, so ``get`` returns it byte for byte, but its YAML front
matter and HTML comments are not prose: their keys would match every query that names
them ("title author tags") and their text would open snippets. :func:`mask` blanks them
with spaces (newlines kept) so chunk offsets still point into the stored text; the front
matter's values count only through the fields they fill (title, tags, author ...).
:func:`clean` strips Markdown markup (emphasis, wiki links, link targets, table pipes,
heading marks) from text shown to a reader: snippets, chunk text.
"""

from __future__ import annotations

import re

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:.*\r?\n)*?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_MARKDOWN_TYPES = frozenset({"markdown"})

_WIKI = re.compile(r"!?\[\[([^\[\]|\n]*?)(?:\|([^\[\]\n]*))?\]\]")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`)")
_HEADING = re.compile(r"(^|\n|\s)#{1,6}[ \t]+")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?")
_PIPES = re.compile(r"\s*\|\s*")
_SPACES = re.compile(r"[ \t]{2,}")
# What each pattern above needs to match at all ("<!--", "[", "*" / "__" / "~~" / "`", "#",
# "---", "|"): a snippet with none of them is cleaned by folding spaces alone.
_MARKS = ("<!--", "[", "*", "_", "~", "`", "#", "---", "|")


def mask(text: str, doc_type: str) -> str:
    """``text`` with front matter and HTML comments blanked (same length, same lines)."""
    if doc_type not in _MARKDOWN_TYPES:
        return text
    return _COMMENT.sub(_blank, _FRONT_MATTER.sub(_blank, text, count=1))


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def clean(text: str) -> str:
    """Markdown markup stripped, for reading: ``[[Note|shown]]`` -> ``shown``,
    ``[text](url)`` -> ``text``, ``**bold**`` -> ``bold``, table pipes -> spaces."""
    if not any(mark in text for mark in _MARKS):  # prose: no pattern below but spaces can match
        if "  " not in text and "\t" not in text:  # nor that one: most snippets
            # (the regex tries a match at every character: 6% of a keyword search)
            return text.strip()
        return _SPACES.sub(" ", text).strip()
    # Each pattern only where the text holds what it needs to match (a regex tries a match
    # at every character: a text with a citation's "[" ran all eight).
    if "<!--" in text:
        text = _COMMENT.sub(" ", text)
    if "[[" in text:
        text = _WIKI.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "*" in text or "__" in text or "~~" in text or "`" in text:
        text = _EMPHASIS.sub("", text)
    if "#" in text:
        text = _HEADING.sub(r"\1", text)
    if "---" in text:
        text = _TABLE_RULE.sub(" ", text)
    if "|" in text:
        text = _PIPES.sub(" ", text)
    if "  " in text or "\t" in text:
        text = _SPACES.sub(" ", text)
    return text.strip()
