"""Bounds on one search: how many terms reach the index, and how long it may run.

A query of thousands of words becomes an OR of thousands of FTS terms that reads most of
the index and holds the store's one connection; the words that find anything are the rare
ones, so a long query keeps its ``MAX_WORDS`` rarest words (fewest chunks hold them, the
highest idf) and says which it dropped in ``explain``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trove.search.query import ParsedQuery

MAX_WORDS = 64
# CJK text is searched as overlapping bigrams; this many characters of it (in order).
MAX_CJK_CHARS = 256
# Seconds one index statement of a search may run before it is stopped (QueryTimeout).
SEARCH_BUDGET_S = 5.0


def bounded(
    parsed: ParsedQuery, counts: Callable[[Sequence[str]], Mapping[str, int]]
) -> tuple[ParsedQuery, tuple[str, ...]]:
    """``parsed`` cut to at most ``MAX_WORDS`` words and ``MAX_CJK_CHARS`` of CJK, and the
    words dropped. ``counts`` gives how many chunks hold each word (0: none)."""
    dropped: tuple[str, ...] = ()
    words = parsed.words
    if len(words) > MAX_WORDS:
        found = counts(words)

        def rarity(i: int) -> tuple[bool, int, int]:
            count = found.get(words[i], 0)
            return (count == 0, count, i)  # a word no chunk holds finds nothing: last

        keep = set(sorted(range(len(words)), key=rarity)[:MAX_WORDS])
        dropped = tuple(w for i, w in enumerate(words) if i not in keep)
        words = tuple(w for i, w in enumerate(words) if i in keep)
    cjk, budget = [], MAX_CJK_CHARS
    for segment in parsed.cjk:
        if budget <= 0:
            break
        cjk.append(segment[:budget])
        budget -= len(segment)
    return replace(parsed, words=words, cjk=tuple(dict.fromkeys(cjk))), dropped
