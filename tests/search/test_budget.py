"""Hits with text: the best chunk, its neighbours, and a token budget."""

from __future__ import annotations

import pytest

import trove
from trove.errors import InvalidQuery
from trove.search import budget

LONG = "\n\n".join(
    f"## Part {i}\n\n"
    + " ".join(f"Sentence {i}.{j} talks about topic{i} at length." for j in range(12))
    for i in range(6)
)


@pytest.fixture
def long_doc(kb: trove.Store) -> tuple[trove.Store, str]:
    return kb, kb.add(LONG, title="Long", doc_type="markdown")


def test_with_text_gives_the_best_chunk_and_its_heading(long_doc) -> None:
    kb, doc_id = long_doc
    (hit,) = kb.search("topic3", with_text=True)
    assert hit.doc_id == doc_id and hit.text is not None
    assert "topic3" in hit.text and "topic0" not in hit.text
    assert hit.chunk.heading == "Part 3"
    assert hit.to_dict()["text"] == hit.text
    assert "text" not in kb.search("topic3")[0].to_dict()  # only on request


def test_context_adds_the_chunks_around_the_hit(long_doc) -> None:
    kb, _ = long_doc
    (hit,) = kb.search("topic3", context=1)
    assert hit.context is not None
    positions = {c["position"] for c in hit.context}
    assert positions == {"before", "after"}
    assert all(abs(c["index"] - hit.chunk.index) == 1 for c in hit.context)


def test_max_tokens_fits_hits_and_cuts_the_last_on_a_sentence(kb: trove.Store) -> None:
    for i in range(5):
        kb.add(" ".join(f"Shared words number {j} in note {i}." for j in range(30)), title=f"n{i}")
    hits = kb.search("shared words", limit=5, max_tokens=300)
    count = budget.counter().count
    assert sum(count(h.text or "") for h in hits) <= 300
    assert hits[-1].truncated and hits[-1].text.endswith(budget.TRUNCATED)
    assert hits[-1].text[: -len(budget.TRUNCATED)].rstrip().endswith(".")
    assert not any(h.truncated for h in hits[:-1])
    assert len(kb.search("shared words", limit=5, max_tokens=100_000)) == 5


def test_the_counter_says_what_it_is() -> None:
    assert budget.counter().name in ("estimate", "tiktoken:cl100k_base")
    if budget.counter().name == "estimate":
        assert budget.counter().count("abcd" * 10) == 10
        assert budget.counter().count("知识库") == 3


@pytest.mark.parametrize(
    "options", [{"context": -1}, {"context": 11}, {"max_tokens": 0}, {"max_tokens": "many"}]
)
def test_bad_options_are_refused(kb: trove.Store, options: dict) -> None:
    with pytest.raises(InvalidQuery):
        kb.search("x", **options)
