"""An exact match of what the caller asked for: a hit whose text holds the query itself.

The calibrated score estimates relevance from the retrievers' scores, which say little
in some places a caller looks on purpose: a raw phrase (BM25 of a quoted phrase is low
in a store of a few notes), an entry's own ``keyword_text`` or ``semantic_text``, the
words of an enrichment. There the estimate fell below the default floor, so ``trove
search`` hid exactly what was asked for. A hit that holds the query, as a phrase (its
words in order, separated by anything but letters and digits; a raw query's every word
and phrase), is shown at least at the floor (:func:`trove.search.calibration.lift`).
Nonsense seldom holds together that way: bench/nonsense.py counts how often it does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from trove.search.cjk import has_cjk
from trove.search.query import ParsedQuery

_TOKEN = re.compile(r"[^\W_]+")
# A query shorter than this (a letter, "to") matches too much to count as asked for.
MIN_CHARS = 3
MIN_CJK_CHARS = 2


def phrases(query: str, parsed: ParsedQuery) -> tuple[str, ...]:
    """What the caller asked for, as phrases a hit must hold: a raw query's words and
    phrases, else the whole query; none when one is too short to mean anything."""
    wanted = parsed.raw_terms() if parsed.raw is not None else [query]
    found = tuple(" ".join(_TOKEN.findall(p.lower())) for p in wanted)
    if not found or any(len(p) < (MIN_CJK_CHARS if has_cjk(p) else MIN_CHARS) for p in found):
        return ()
    return found


def words(phrase_list: Sequence[str]) -> tuple[str, ...]:
    """The non-CJK words of the phrases (a raw query's words, for coverage)."""
    return tuple(w for p in phrase_list for w in p.split() if not has_cjk(w))


def holds(phrase_list: Sequence[str], text: str) -> bool:
    """Whether ``text`` holds every phrase (case-insensitively)."""
    return bool(phrase_list) and all(_pattern(p).search(text) for p in phrase_list)


@lru_cache(maxsize=64)
def _pattern(phrase: str) -> re.Pattern[str]:
    tokens = phrase.split()
    body = r"[\W_]+".join(re.escape(t) for t in tokens)
    # A word must not run on into letters or digits ("cat" is not in "catalog"); a CJK
    # run may sit inside a longer one (CJK text has no spaces between words).
    start = "" if has_cjk(tokens[0][0]) else r"(?<![^\W_])"
    end = "" if has_cjk(tokens[-1][-1]) else r"(?![^\W_])"
    return re.compile(start + body + end, re.IGNORECASE)
