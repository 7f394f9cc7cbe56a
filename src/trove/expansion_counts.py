"""How this process's query expansions went: counted by :mod:`trove.expansion`, reported
by ``Store.stats`` (a module of its own: counting loads no part of expansion or search)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CacheCounts:
    """This process's expansion lookups: cache hits, model calls, failed calls."""

    hits: int = 0
    misses: int = 0
    failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def to_dict(self) -> dict[str, Any]:
        asked = self.hits + self.misses
        return {
            "hits": self.hits,
            "misses": self.misses,
            "failures": self.failures,
            "hit_rate": round(self.hits / asked, 4) if asked else None,
        }
