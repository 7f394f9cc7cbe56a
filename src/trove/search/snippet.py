"""Snippets: the densest window of a chunk around the query's matches, matches marked.

Built in Python from match intervals rather than with FTS5's snippet(), which re-reads
every query term's posting list per hit (far slower than this).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

OPEN, CLOSE, ELLIPSIS = "«", "»", "…"
WIDTH = 200

# (utf-8 bytes) -> [(start byte, end byte, token), ...], e.g. an apsw FTS5 tokenizer.
Tokenize = Callable[[bytes], Sequence[tuple[int, int, str]]]
# (lower-case ASCII words) -> each word's token (what the tokenizer makes of it alone).
Normalize = Callable[[Collection[str]], Mapping[str, str]]
# ASCII text as a unicode61 tokenizer (FTS5's, without tokenchars or separators options)
# sees it: its tokens are the runs of letters and digits, case folded; the rest separates.
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# The last letters of a stem that porter may have written itself (y -> i, a final e, the
# l of "-biliti" -> "-ble" -> "-bl"): the word need not hold them.
_REWRITTEN = frozenset("eil")
_FOLD = bytes(
    ord(chr(b).lower()) if chr(b).isascii() and chr(b).isalnum() else ord(" ") for b in range(256)
)


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


def ascii_word_intervals(
    normalize: Normalize,
    texts: Sequence[str],
    terms: Iterable[str],
    separates: Callable[[str], bool] | None = None,
) -> list[list[tuple[int, int]] | None]:
    """:func:`word_intervals` of each of ``texts`` whose words are ASCII (None for the
    others), under the word index's tokenizer (unicode61 and porter), without tokenizing
    them. A text's words are ASCII when it is, or when ``separates`` (whether the
    tokenizer reads a character as a separator) says so of each of its other characters
    (a dash, a degree sign: they stand for spaces).

    A word whose stem is a wanted term starts with that term, or, when the term ends in
    "e", "i" or "l", with all of it but that letter (its first letter at least): porter
    only cuts a word's ending and rewrites at most its last letter ("happy" -> "happi",
    "hoping" -> "hope", "possibility" -> "possibl"; tests/search/test_snippet.py checks
    thousands of words). So only the words that start so are normalized (``normalize``
    may cache them: a word's token does not depend on its neighbours), found with
    ``bytes.find`` in the texts folded to lower-case words between spaces, all texts at
    once. Tokenizing every hit's whole text cost more than the rest of a keyword search
    (a tuple per token).
    """
    starts, parts, at = [], [], 1
    plain = [_ascii_words(text, separates) for text in texts]
    for text, ok in zip(texts, plain, strict=True):
        starts.append(at)
        # A character outside ASCII becomes one "?" (so offsets stay), then a space.
        folded = text.encode("ascii", "replace").translate(_FOLD) if ok else b""
        parts.append(folded)
        at += len(folded) + 1
    folded = b" " + b" ".join(parts) + b" "  # each text's words between spaces
    found: dict[int, bytes] = {}  # start in ``folded`` -> the word there
    for term in set(terms):
        if not term.isascii():  # no ASCII word has a token outside ASCII
            continue
        start = term[:-1] if term[-1] in _REWRITTEN and len(term) > 1 else term
        prefix = b" " + start.encode("ascii")
        at = folded.find(prefix)
        while at != -1:
            end = folded.find(b" ", at + 1)
            found[at + 1] = folded[at + 1 : end]
            at = folded.find(prefix, end)
    names = {word: word.decode("ascii") for word in set(found.values())}
    tokens = normalize(set(names.values()))
    wanted = set(terms)
    keep = {word for word, name in names.items() if tokens[name] in wanted}
    spans: list[list[tuple[int, int]] | None] = [[] if ok else None for ok in plain]
    for begin in sorted(at for at, word in found.items() if word in keep):
        i = bisect.bisect_right(starts, begin) - 1
        end = begin + len(found[begin])
        spans[i].append((begin - starts[i], end - starts[i]))  # type: ignore[union-attr]
    return spans


def _ascii_words(text: str, separates: Callable[[str], bool] | None) -> bool:
    """Whether every word of ``text`` is ASCII and every other character separates."""
    if text.isascii():
        return True
    return separates is not None and all(map(separates, set(_NON_ASCII.findall(text))))


def fold_ascii(text: str) -> bytes:
    """ASCII ``text`` as its words, lower-cased, with a space for every other character
    (same length): ``b" " + word`` in ``b" " + fold_ascii(text)`` says whether a word of
    the text starts with ``word`` (letters and digits)."""
    return text.encode("ascii").translate(_FOLD)


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
    # The window with the most distinct terms, then the most matches: "we … we … we"
    # is a weaker passage than "we ran redis" (search/passage.py picks chunks so too).
    words = [text[s:e].lower() for s, e in spans]
    best, best_key, right = 0, (0, 0), 0
    for left in range(len(spans)):
        while right < len(spans) and spans[right][1] - spans[left][0] <= width:
            right += 1
        key = (len(set(words[left:right])), right - left)
        if key > best_key:
            best, best_key = left, key
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
