"""Hits an agent can use without a second call: chunk text, neighbours, a token budget.

``with_text`` gives each hit the text of its best chunk (and its heading path, already on
``hit.chunk``); ``context=N`` adds up to N chunks on each side; ``max_tokens=N`` returns
as many hits, best first, as fit in N tokens of text, the last one cut at a sentence
boundary and marked ``truncated``. Tokens are counted with tiktoken's ``cl100k_base``
when tiktoken is installed and its encoding loads offline, otherwise estimated (about
four characters per token for alphabetic text, one per CJK character); :func:`counter`
says which.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from trove.errors import InvalidQuery
from trove.hits import Hit
from trove.models import Document
from trove.search.snippet_text import clean

# A document may ask to surface only on a strong match: metadata {"min_score": 0.7}.
DOC_MIN_SCORE = "min_score"
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
TRUNCATED = "…"


@dataclass(frozen=True)
class Counter:
    name: str
    count: Callable[[str], int]


@cache
def _cjk() -> re.Pattern[str]:
    """Compiled on first use: re builds a table for this class at compile time (several
    milliseconds), and every process that opens a store imports this module."""
    return re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _estimate(text: str) -> int:
    cjk = len(_cjk().findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@cache
def counter() -> Counter:
    """The token counter in use: ``tiktoken:cl100k_base`` or ``estimate``.

    tiktoken is used only with its encodings cached on disk (``TIKTOKEN_CACHE_DIR``
    set): without them it would fetch ``cl100k_base`` from the network on first use, and
    trove never reaches the network unless asked."""
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Counter("estimate", _estimate)
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base")
        return Counter("tiktoken:cl100k_base", lambda t: len(encoding.encode(t)))
    except Exception:  # not installed, or its encoding is not cached and cannot be fetched
        return Counter("estimate", _estimate)


@dataclass(frozen=True)
class Options:
    """What a search returns beyond ranked hits; checked before any work is done."""

    min_score: float | None = None
    with_text: bool = False
    context: int = 0
    max_tokens: int | None = None

    @classmethod
    def check(cls, min_score: Any, with_text: Any, context: Any, max_tokens: Any) -> Options:
        if min_score is not None and (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not 0.0 <= min_score <= 1.0
        ):
            raise InvalidQuery("min_score must be a number between 0 and 1")
        if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 10:
            raise InvalidQuery("context must be an integer between 0 and 10")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise InvalidQuery("max_tokens must be a positive integer")
        text = bool(with_text) or context > 0 or max_tokens is not None
        return cls(min_score, text, context, max_tokens)

    def passes(self, score: float, doc: Document | Hit) -> bool:
        """Above the caller's floor and the document's own (metadata ``min_score``)."""
        if self.min_score is not None and score < self.min_score:
            return False
        own = doc.metadata.get(DOC_MIN_SCORE) if isinstance(doc.metadata, dict) else None
        if isinstance(own, int | float) and not isinstance(own, bool):
            return score >= float(own)
        return True


def finish(backend: Any, hits: list[Hit], options: Options) -> list[Hit]:
    """Attach chunk text and neighbours, then apply the token budget."""
    if not options.with_text or not hits:
        return hits
    stored = backend.export_chunks(sorted({h.doc_id for h in hits}), None)
    full = [_with_text(hit, stored.get(hit.doc_id, []), options.context) for hit in hits]
    return full if options.max_tokens is None else fit(full, options.max_tokens)


def _with_text(hit: Hit, rows: Sequence[tuple[Any, Any]], context: int) -> Hit:
    texts = {row.chunk.index: row.text for row, _ in rows}
    own = texts.get(hit.chunk.index)
    if own is None:  # a linked document's stand-in chunk: the start of its text
        own = rows[0][0].text if rows else ""
    around = [
        {"index": i, "position": "before" if i < hit.chunk.index else "after", "text": clean(t)}
        for i in range(hit.chunk.index - context, hit.chunk.index + context + 1)
        if i != hit.chunk.index and (t := texts.get(i)) is not None
    ]
    return replace(hit, text=clean(own), context=around if context else None)


def fit(hits: list[Hit], max_tokens: int) -> list[Hit]:
    """As many hits as fit in ``max_tokens`` (text and context), best first; the last
    one that does not fit whole is cut at a sentence boundary and marked truncated."""
    count = counter().count
    kept: list[Hit] = []
    left = max_tokens
    for hit in hits:
        pieces = [hit.text or ""] + [c["text"] for c in hit.context or []]
        need = sum(count(p) for p in pieces)
        if need <= left:
            kept.append(replace(hit, tokens=need))
            left -= need
            continue
        cut = _cut(hit.text or "", left, count)
        if cut:
            kept.append(replace(hit, text=cut, context=None, truncated=True, tokens=count(cut)))
        break
    return kept


def _cut(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest prefix of whole sentences within ``budget`` tokens (with the mark)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text)]
    best = ""
    for end in ends:
        candidate = text[:end].rstrip() + " " + TRUNCATED
        if count(candidate) > budget:
            break
        best = candidate
    return best
