"""CJK text cut into the terms of the CJK bigram index (see trove.search.query).

Writing a chunk needs :func:`cjk_text`, so every process that opens a store imports this
module; it holds no dataclass and compiles no pattern at import (the query parser, with
its dataclasses, loads at the first search).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, partial

# Han (with extensions and compatibility forms), kana, Hangul, half-width kana.
_CJK = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uff66-\uff9d\U00020000-\U0002fa1f"
)


def _on_first_use(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """``pattern``, compiled on first call, not at import: re spends 2-10 ms on each wide
    Unicode class, and every process that opens a store imports this module (compiled at
    import, this module's patterns were about 18% of `trove stats`' instructions)."""
    return cache(partial(re.compile, pattern, flags))


_cjk_char = _on_first_use(f"[{_CJK}]")


# A "segment" is a run of letters/digits that contains CJK ("战国无双3"); its grams are
# its two-character windows that hold CJK, and the letters or digits written against CJK
# kept whole ("3"). On CMRC 2018 that beats bigrams of CJK alone (nDCG@10 trial 0.977
# against 0.971) and CJK bigrams with whole pieces but no windows across them (0.976).
_cjk_segment = _on_first_use(rf"[^\W_]*[{_CJK}][^\W_]*")


# Segments are looked for only inside blocks of letters, digits and CJK (no segment
# crosses anything else) that hold CJK: run over a long word without CJK, the segment
# pattern backtracks from every start (quadratic in the word's length), a block pattern cannot.
_block = _on_first_use(rf"(?:[^\W_]|[{_CJK}])+")
_non_cjk = _on_first_use(rf"[^{_CJK}]+")


def has_cjk(text: str) -> bool:
    # ASCII (most text) is answered without the regex scan.
    return not text.isascii() and _cjk_char().search(text) is not None


def cjk_grams(text: str) -> list[str]:
    """The CJK index terms of ``text``, in order: each two-character window of a CJK
    segment that holds CJK ("战国无双3" -> "战国" "国无" "无双" "双3"), and the letters or
    digits written against CJK as whole pieces ("3"); a segment of one character stays
    whole. Words that stand apart from CJK text are the word index's."""
    grams: list[str] = []
    cjk_char, non_cjk = _cjk_char(), _non_cjk()  # looked up once: this loop runs per character
    for start, end in _segment_spans(text):
        segment = text[start:end].lower()
        if len(segment) == 1:
            grams.append(segment)
            continue
        pieces = {m.start(): m.group() for m in non_cjk.finditer(segment)}
        if not pieces:
            grams.extend(segment[i : i + 2] for i in range(len(segment) - 1))
            continue
        for i in range(len(segment)):
            if i in pieces:
                grams.append(pieces[i])
            pair = segment[i : i + 2]
            if len(pair) == 2 and cjk_char.search(pair):
                grams.append(pair)
    return grams


def cjk_text(head: str, text: str) -> str | None:
    """What a chunk writes into the CJK bigram index, or None when it has no CJK."""
    if not (has_cjk(text) or has_cjk(head)):
        return None
    return " ".join(cjk_grams(head + "\n" + text))


def cjk_segments(text: str) -> list[str]:
    """The CJK segments of ``text`` (runs of letters and digits that hold CJK), in order."""
    return [text[a:b] for a, b in _segment_spans(text)]


def blank_cjk(text: str, *, keep_offsets: bool = False) -> str:
    """``text`` with each CJK segment replaced by one space (or by as many as it has
    characters, ``keep_offsets``), leaving the words written apart from CJK."""
    return _blank(text, _segment_spans(text), keep_offsets)


def _segment_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each CJK segment of ``text``, in linear time."""
    if text.isascii():  # most queries, and no CJK character is ASCII
        return []
    spans = []
    for block in _block().finditer(text):
        if has_cjk(block.group()):
            for m in _cjk_segment().finditer(text, block.start(), block.end()):
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
