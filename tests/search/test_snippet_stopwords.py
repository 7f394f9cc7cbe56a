"""Snippets mark the query's content words, never its stop words, in every mode (issue 11)."""

from __future__ import annotations

import pytest

import trove


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_no_mode_marks_stop_words(store_target: str, mode: str) -> None:
    with trove.open(store_target, embedder="hash:64") as kb:
        kb.add("The capital of France is Paris, and it is on the Seine.")
        hits = kb.search("what is the capital of the country", mode=mode, min_score=0)
    assert hits
    for hit in hits:
        assert "«capital»" in hit.snippet
        for stop in ("The", "the", "of", "is"):
            assert f"«{stop}»" not in hit.snippet, hit.snippet
