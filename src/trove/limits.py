"""Bounds on what an agent may write and read through a server, in tokens.

Tokens are counted as the search results' token budget counts them
(``trove.search.budget``, tiktoken's ``cl100k_base`` when installed, when that module is
present), else estimated: one per CJK character, one per four other characters.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from .errors import ContentTooLarge

DEFAULT_MAX_CONTENT_TOKENS = 2048
DEFAULT_MAX_RESULT_TOKENS = 4096
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@cache
def _counter() -> Callable[[str], int]:
    try:  # the search budget's counter, so a write and a result are counted alike
        budget = importlib.import_module("trove.search.budget")
        return budget.counter().count
    except (ImportError, AttributeError):
        return estimate


def count(text: str) -> int:
    """Tokens in ``text``."""
    return int(_counter()(text))


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
