"""Split a document into chunks: at Markdown headings, then into size-bounded windows.

A chunk is only ``(start, end)`` character offsets into the document plus the heading
path above it, so the document is never rebuilt from chunks and overlap costs nothing
in correctness.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from trove.models import Chunk

DEFAULT_MAX_CHARS = 1200
DEFAULT_OVERLAP = 150

# Fence lines toggle "inside code" so a '# comment' in a shell block is not a heading.
_BLOCK_LINE = re.compile(
    r"^(?:(?P<fence>```|~~~)|(?P<hashes>#{1,6})[ \t]+(?P<title>[^\r\n]*))", re.M
)
# Break points, best first: paragraph, line, sentence (Latin and CJK), word.
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "。", "！", "？", "; ", "；", "，", ", ", " ", "\t")


def chunk_text(
    text: str, *, max_chars: int = DEFAULT_MAX_CHARS, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Chunks covering every non-blank part of ``text``; whitespace-only spans are dropped."""
    if max_chars < 20:
        raise ValueError("max_chars must be at least 20")
    if len(text) <= max_chars and _plain(text):
        # One section in one window (most items of a bulk write): none of the passes.
        return [Chunk(index=0, start=0, end=len(text))] if text and not text.isspace() else []
    overlap = max(0, min(overlap, max_chars // 2))
    chunks: list[Chunk] = []
    for start, end, heading in _sections(text):
        for w_start, w_end in _windows(text, start, end, max_chars, overlap):
            if not text[w_start:w_end].strip():
                continue
            chunks.append(Chunk(index=len(chunks), start=w_start, end=w_end, heading=heading))
    return chunks


def _sections(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, heading path) per Markdown section; plain text is one section.

    A heading with no body of its own ("# Title" straight above "## Part") is merged into
    the section that follows, so no chunk is a lone heading.
    """
    if _plain(text):
        yield 0, len(text), ""  # no heading can start here: one section, no regex scan
        return
    bounds: list[tuple[int, str]] = [(0, "")]
    stack: list[tuple[int, str]] = []
    in_fence = False
    for match in _BLOCK_LINE.finditer(text):
        if match.group("fence"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        level = len(match.group("hashes"))
        title = match.group("title").strip().rstrip("#").strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        bounds.append((match.start(), " > ".join(t for _, t in stack if t)))
    carried: int | None = None
    for i, (start, heading) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else len(text)
        body = _end_of_line(text, start) if heading else start
        if i + 1 < len(bounds) and not text[body:end].strip():
            carried = start if carried is None else carried
            continue
        yield (start if carried is None else carried), end, heading
        carried = None


def _plain(text: str) -> bool:
    """Whether nothing in ``text`` can start a Markdown section (a heading or a fence)."""
    return "#" not in text and "```" not in text and "~~~" not in text


def _end_of_line(text: str, at: int) -> int:
    newline = text.find("\n", at)
    return len(text) if newline == -1 else newline + 1


def _windows(
    text: str, start: int, end: int, max_chars: int, overlap: int
) -> Iterator[tuple[int, int]]:
    position = start
    while end - position > max_chars:
        limit = position + max_chars
        cut = _break_before(text, position + max_chars // 2, limit)
        yield position, cut
        following = max(cut - overlap, position + 1)
        space = _first_space(text, following, cut)
        position = space if space is not None else following
    yield position, end


def _break_before(text: str, lo: int, hi: int) -> int:
    for separator in _BREAKS:
        found = text.rfind(separator, lo, hi)
        if found != -1:
            return found + len(separator)
    return hi


def _first_space(text: str, lo: int, hi: int) -> int | None:
    match = re.compile(r"\s+").search(text, lo, hi)
    if match is None or match.end() >= hi:
        return None
    return match.end()
