"""Chunks a caller cuts a document into (trove.operations.chunk_spans), on every backend: they are
the chunks stored, searched and embedded; bad spans are refused before anything of the
batch is written."""

from __future__ import annotations

from typing import Any

import pytest

import trove
from trove.errors import InvalidInput

TEXT = "# Alpha\nthe walrus sleeps on ice.\n\n# Beta\nthe otter swims in kelp.\n"
B = TEXT.index("# Beta")


def test_given_chunks_are_the_chunks(kb: trove.Store) -> None:
    (doc,) = kb.add_many([{"text": TEXT, "chunks": [[0, B, "Alpha"], [B, len(TEXT), "Beta"]]}])
    assert kb.get(doc, record_access=False).text == TEXT  # type: ignore[union-attr]
    (hit,) = kb.search("otter kelp", with_text=True, min_score=0, limit=1)
    assert (hit.chunk.start, hit.chunk.end, hit.chunk.heading) == (B, len(TEXT), "Beta")
    assert hit.text is not None and "otter swims in kelp" in hit.text and "walrus" not in hit.text
    events: list[dict[str, Any]] = []
    kb.subscribe(events.append)
    again = kb.add_many([{"text": TEXT, "chunks": [[0, 10], [5, len(TEXT)]]}])  # overlapping
    assert again == [doc] and events == []  # the same document, cut anew: no change
    (hit,) = kb.search("otter kelp", with_text=True, min_score=0, limit=1)
    assert (hit.chunk.start, hit.chunk.end) == (5, len(TEXT))


@pytest.mark.parametrize(
    "spans",
    [
        [],
        "0-10",
        [[0, 5]],  # the rest of the text left out
        [[0, B], [B + 3, len(TEXT)]],  # a gap with words in it
        [[0, len(TEXT) + 1]],
        [[10, 10], [0, len(TEXT)]],
        [[B, len(TEXT)], [0, B]],  # out of order
        [[0, len(TEXT), 7]],
        [[True, len(TEXT)]],
        [["0", len(TEXT)]],
    ],
)
def test_bad_spans_write_nothing_of_the_batch(kb: trove.Store, spans: Any) -> None:
    with pytest.raises(InvalidInput, match="chunks"):
        kb.add_many([{"text": "a first note"}, {"text": TEXT, "chunks": spans}])
    assert kb.stats().documents == 0


def test_an_entry_under_entry_control_is_one_span(kb: trove.Store) -> None:
    with pytest.raises(InvalidInput, match="entry control"):
        kb.add_many([{"text": TEXT, "keyword_text": "w", "chunks": [[0, len(TEXT)]]}])
