"""Bounds on what an agent may write and read through a server, in tokens.

Tokens are counted as the search results' token budget counts them
(:func:`trove.search.budget.counter`), so a write and a result are counted alike.
"""

from __future__ import annotations

import json
from typing import Any

from trove.errors import ContentTooLarge
from trove.search import budget

DEFAULT_MAX_CONTENT_TOKENS = 2048
DEFAULT_MAX_RESULT_TOKENS = 4096


def count(text: str) -> int:
    """Tokens in ``text``."""
    return budget.counter().count(text)


def check_content(text: Any, limit: int | None, *, field: str = "text") -> None:
    """Refuse ``text`` over ``limit`` tokens (None: no limit)."""
    if limit is None or not isinstance(text, str):
        return
    size = count(text)
    if size > limit:
        raise ContentTooLarge(
            f"{field} is about {size} tokens; this server accepts at most {limit} "
            "(max_content_tokens in the server config): split it into smaller items"
        )


def fit(items: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], bool]:
    """The leading ``items`` whose JSON fits in ``budget`` tokens, and whether any were
    dropped. Whole items only: a model is better served by fewer complete results."""
    kept: list[dict[str, Any]] = []
    used = 0
    for item in items:
        size = count(json.dumps(item, ensure_ascii=False))
        if used + size > budget:
            return kept, True
        kept.append(item)
        used += size
    return kept, False
