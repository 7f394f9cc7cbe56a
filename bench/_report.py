"""docs/benchmarks.md from the results of bench/peers.py and bench/scale.py."""

from __future__ import annotations


def write() -> None:
    pass
