"""Snippets: the densest window of a chunk around the query's matches, matches marked.

Built in Python from match intervals rather than with FTS5's snippet(), which re-reads
every query term's posting list per hit (far slower than this).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

OPEN, CLOSE, ELLIPSIS = "«", "»", "…"
WIDTH = 200

# (utf-8 bytes) -> [(start byte, end byte, token), ...], e.g. an apsw FTS5 tokenizer.
Tokenize = Callable[[bytes], Sequence[tuple[int, int, str]]]


def word_intervals(tokenize: Tokenize, text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of the tokens of ``text`` whose normalized form is in ``terms``."""
    wanted = set(terms)
    if not wanted:
        return []
    data = text.encode("utf-8")
    found = [(start, end) for start, end, token in tokenize(data) if token in wanted]
    if len(data) == len(text):  # ASCII: byte offsets are character offsets
        return found
    spans = []
    char, byte = 0, 0
    for start, end in found:
        char += len(data[byte:start].decode("utf-8", "replace"))
        length = len(data[start:end].decode("utf-8", "replace"))
        spans.append((char, char + length))
        char, byte = char + length, end
    return spans


def substring_intervals(text: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans where any needle occurs (case-insensitively), overlaps merged."""
    folded = text.lower()
    if len(folded) != len(text):  # lower() changed lengths (rare): match without folding
        folded = text
    spans = []
    for needle in {n.lower() for n in needles if n}:
        at = folded.find(needle)
        while at != -1:
            spans.append((at, at + len(needle)))
            at = folded.find(needle, at + 1)
    return _merge(sorted(spans))


def make(text: str, spans: Sequence[tuple[int, int]], width: int = WIDTH) -> str:
    """About ``width`` characters of ``text`` around the densest cluster of ``spans``."""
    if not spans:
        return _clip(text, 0, width)
    spans = _merge(sorted(spans))
    best, best_count, right = 0, 0, 0
    for left in range(len(spans)):
        while right < len(spans) and spans[right][1] - spans[left][0] <= width:
            right += 1
        if right - left > best_count:
            best, best_count = left, right - left
    first = spans[best][0]
    start = max(0, first - width // 4)
    start = _word_start(text, start, first)
    end = min(len(text), start + width)
    inside = [s for s in spans if s[0] >= start and s[1] <= end]
    pieces: list[str] = []
    at = start
    for s, e in inside:
        pieces.extend((text[at:s], OPEN, text[s:e], CLOSE))
        at = e
    pieces.append(text[at:end])
    body = "".join(pieces).replace("\n", " ").replace("\r", "")
    return (ELLIPSIS if start > 0 else "") + body.strip() + (ELLIPSIS if end < len(text) else "")


def _clip(text: str, start: int, width: int) -> str:
    end = min(len(text), start + width)
    body = text[start:end].replace("\n", " ").replace("\r", "").strip()
    return body + (ELLIPSIS if end < len(text) else "")


def _word_start(text: str, start: int, limit: int) -> int:
    """Move ``start`` forward to just after a space, so a snippet does not open mid-word."""
    if start == 0:
        return 0
    space = text.find(" ", start, limit)
    return start if space == -1 else space + 1


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged
