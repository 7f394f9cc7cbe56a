"""Ranking that knows time and use (opt-in): ``search(..., rerank=...)``.

Each hit's score is blended with three factors, each in [0, 1]:

- recency: ``0.5 ** (age / half_life)``, the age (days) since the later of the
  document's timestamp and its last access (its creation when it has neither);
- importance: the document's own importance (default 0.5);
- access: ``1 - 1 / (1 + access_count)``, which saturates (1 read: 0.5, 9 reads: 0.9).

``final = (1 - Σw) · score + w_recency · recency + w_importance · importance
+ w_access · access``. ``rerank`` is a dict ``{"recency": half_life_days,
"recency_weight": w, "importance": w, "access": w}`` (weights 0 to 1, summing to at most
1) or a profile name: ``"memory"`` is ``{"recency": 30, "recency_weight": 0.2,
"importance": 0.15, "access": 0.1}``. Off by default: without ``rerank`` a search never
enters this module, so its ranking is exactly the plain one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trove.errors import InvalidQuery
from trove.hits import Hit
from trove.timeutil import to_epoch

PROFILES: dict[str, dict[str, float]] = {
    "memory": {"recency": 30.0, "recency_weight": 0.2, "importance": 0.15, "access": 0.1},
}
_KEYS = ("recency", "recency_weight", "importance", "access")
_DAY = 86400.0
# How many candidates a reranked search ranks, per hit asked for (at most _DEPTH).
WIDEN = 3
_DEPTH = 200


@dataclass(frozen=True)
class Rerank:
    half_life_days: float | None
    recency: float
    importance: float
    access: float

    @property
    def relevance(self) -> float:
        return 1.0 - self.recency - self.importance - self.access


def parse(value: str | Mapping[str, Any]) -> Rerank:
    """``rerank=`` checked: a profile name or a dict of the documented keys."""
    if isinstance(value, str):
        if value not in PROFILES:
            raise InvalidQuery(f"unknown rerank profile {value!r}; use {', '.join(PROFILES)}")
        value = PROFILES[value]
    if not isinstance(value, Mapping):
        raise InvalidQuery("rerank must be a profile name or a dict")
    unknown = set(value) - set(_KEYS)
    if unknown:
        raise InvalidQuery(f"unknown rerank key {sorted(unknown)[0]!r}; use {', '.join(_KEYS)}")
    numbers = {}
    for key in _KEYS:
        raw = value.get(key)
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int | float)):
            raise InvalidQuery(f"rerank {key} must be a number")
        numbers[key] = None if raw is None else float(raw)
    half_life = numbers["recency"]
    if half_life is not None and not half_life > 0:
        raise InvalidQuery("rerank recency is a half-life in days and must be positive")
    recency = numbers["recency_weight"]
    if recency is None:
        recency = 0.2 if half_life is not None else 0.0
    rank = Rerank(half_life, recency, numbers["importance"] or 0.0, numbers["access"] or 0.0)
    weights = (rank.recency, rank.importance, rank.access)
    if any(not 0 <= w <= 1 for w in weights) or sum(weights) > 1 + 1e-9:
        raise InvalidQuery("rerank weights must be from 0 to 1 and sum to at most 1")
    return rank


def factors(hit: Hit, rank: Rerank, stamp: float) -> dict[str, float]:
    """The three factors of one hit, and its final score."""
    recency = 0.0
    if rank.half_life_days is not None:
        times = [to_epoch(t) for t in (hit.timestamp, hit.last_accessed, hit.created_at)]
        known = [t for t in times[:2] if t is not None] or [t for t in times[2:] if t]
        age_days = max(0.0, stamp - max(known)) / _DAY if known else math.inf
        recency = 0.5 ** (age_days / rank.half_life_days)
    importance = 0.5 if hit.importance is None else min(1.0, max(0.0, hit.importance))
    access = 1.0 - 1.0 / (1.0 + max(0, hit.access_count))
    final = (
        rank.relevance * hit.score
        + rank.recency * recency
        + rank.importance * importance
        + rank.access * access
    )
    return {
        "relevance": hit.score,
        "recency": recency,
        "importance": importance,
        "access": access,
        "final": final,
    }


def apply(hits: Sequence[Hit], rank: Rerank, stamp: float, limit: int, explain: bool) -> list[Hit]:
    """The hits re-scored and re-ordered (ties keep their relevance order)."""
    scored = []
    for position, hit in enumerate(hits):
        parts = factors(hit, rank, stamp)
        detail = None
        if explain:
            detail = dict(hit.explain or {})
            detail["rerank"] = parts
        scored.append(
            (-parts["final"], position, replace(hit, score=parts["final"], explain=detail))
        )
    scored.sort(key=lambda item: (item[0], item[1]))
    return [hit for _, _, hit in scored[:limit]]


def depth(limit: int) -> int:
    """How many plain hits to rerank for ``limit`` results."""
    return min(_DEPTH, max(limit, limit * WIDEN))
