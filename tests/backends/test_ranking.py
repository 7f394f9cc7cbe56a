"""Collapsing chunk hits to documents: evidence from several indexes adds up."""

from __future__ import annotations

from trove.backends.ranking import merge_evidence
from trove.models import Chunk, ChunkHit


def test_two_indexes_evidence_adds_up_on_the_better_chunk() -> None:
    first, better = Chunk(0, 0, 10), Chunk(1, 10, 20)
    scores = {"a": ChunkHit("a", 1, 0.5, first)}
    merge_evidence(scores, ChunkHit("a", 2, 1.5, better))
    assert scores == {"a": ChunkHit("a", 2, 2.0, better)}
    merge_evidence(scores, ChunkHit("b", 3, 0.1, first))
    assert scores["b"] == ChunkHit("b", 3, 0.1, first)


def test_keep_best_keeps_the_better_hit_alone() -> None:
    chunk = Chunk(0, 0, 10)
    scores = {"a": ChunkHit("a", 1, 0.5, chunk)}
    merge_evidence(scores, ChunkHit("a", 2, 0.4, chunk), keep_best=True)
    assert scores == {"a": ChunkHit("a", 1, 0.5, chunk)}
    merge_evidence(scores, ChunkHit("a", 2, 0.9, chunk), keep_best=True)
    assert scores == {"a": ChunkHit("a", 2, 0.9, chunk)}
