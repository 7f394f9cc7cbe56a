"""Entry control (index modes, separate keyword/semantic texts) and memory fields."""

from __future__ import annotations

import pytest

import trove
from trove import InvalidInput
from trove.embedders import HashEmbedder


def test_index_false_entry_is_kept_but_never_found(kb: trove.Store) -> None:
    doc_id = kb.add("hidden walrus fact", index=False, source="s", source_id="1")
    doc = kb.get(doc_id)
    assert doc is not None and doc.text == "hidden walrus fact" and doc.indexed == "none"
    assert kb.get_by_key("s", "1") is not None
    assert [d.id for d in kb.list().items] == [doc_id]
    assert kb.search("walrus") == []


def test_a_payload_only_entry_has_no_text_and_is_never_indexed(kb: trove.Store) -> None:
    first = kb.add("", index="none", metadata={"order": 1, "sku": "walrus-7"})
    second, keyed = kb.add_many(
        [
            {"index": False, "metadata": {"order": 2}},  # text left out altogether
            {"index": False, "metadata": {"order": 3}, "source": "shop", "source_id": "3"},
        ]
    )
    assert len({first, second, keyed}) == 3  # each payload is its own item
    doc = kb.get(first)
    assert doc is not None and (doc.text, doc.metadata["sku"], doc.indexed) == (
        "",
        "walrus-7",
        "none",
    )
    assert kb.get_by_key("shop", "3").metadata == {"order": 3}  # type: ignore[union-attr]
    assert {d.id for d in kb.list().items} == {first, second, keyed}
    assert kb.search("walrus", min_score=0) == [] and kb.search("order", min_score=0) == []
    assert kb.add("", index="none", metadata={"order": 1, "sku": "walrus-7"}) == first
    with pytest.raises(InvalidInput, match="text"):
        kb.add("", metadata={"order": 4})  # indexed entries still need text
    with pytest.raises(InvalidInput, match="text"):
        kb.update(first, index=True)  # nothing to index: refused, the payload stays
    assert kb.get(first).indexed == "none"  # type: ignore[union-attr]


def test_an_entry_leaves_and_rejoins_an_index_with_the_same_id(kb: trove.Store) -> None:
    doc_id = kb.add("walrus facts", source="s", source_id="1")
    assert kb.update(doc_id, index="semantic") == doc_id
    assert kb.search("walrus") == []
    kb.update(doc_id, index=True)
    assert [h.doc_id for h in kb.search("walrus")] == [doc_id]


def test_keyword_text_is_indexed_and_get_returns_the_stored_text(kb: trove.Store) -> None:
    text = "User prefers  dark mode.\r\n"
    doc_id = kb.add(text, keyword_text="theme ui preference darkmode")
    doc = kb.get(doc_id)
    assert doc is not None and doc.text == text
    assert [h.doc_id for h in kb.search("darkmode")] == [doc_id]
    assert kb.search("user") == []  # only the keyword text is indexed


def test_semantic_text_is_what_gets_embedded(store_target: str) -> None:
    embedder = HashEmbedder(32)
    with trove.open(store_target, embedder=embedder) as kb:
        doc_id = kb.add("k8s", semantic_text="container orchestration platform")
        other = kb.add("unrelated gardening notes about tomatoes")
        probe = embedder.embed_query("container orchestration platform").tolist()
        assert kb.search(vector=probe, limit=1)[0].doc_id == doc_id
        hits = kb.search("container orchestration platform", mode="semantic", limit=2)
        assert hits[0].doc_id == doc_id and other in [h.doc_id for h in hits]
        assert kb.search("orchestration", mode="keyword") == []


def test_keyword_only_entry_has_no_vector(store_target: str) -> None:
    with trove.open(store_target, embedder=HashEmbedder(16)) as kb:
        doc_id = kb.add("only words here", index="keyword")
        kept = kb.add("words and meaning")
        assert kb.backend.vector_count() == 1
        assert {h.doc_id for h in kb.search("words", mode="keyword")} == {doc_id, kept}
        assert [h.doc_id for h in kb.search("words", mode="semantic")] == [kept]


def test_memory_fields_defaults_and_round_trip(kb: trove.Store) -> None:
    plain = kb.get(kb.add("plain"))
    assert plain is not None
    assert (plain.importance, plain.confidence, plain.compression_level) == (0.5, 1.0, 0)
    assert (plain.entities, plain.source_turn_ids, plain.canonical_id) == ((), (), None)
    assert (plain.access_count, plain.last_accessed, plain.indexed) == (0, None, "both")
    doc_id = kb.add(
        "rich",
        confidence=0.25,
        compression_level=2,
        entities=["Ana", "Redis", "Ana"],
        source_turn_ids=["t1", "t2"],
    )
    doc = kb.get(doc_id)
    assert doc is not None
    assert (doc.confidence, doc.compression_level) == (0.25, 2)
    assert (doc.entities, doc.source_turn_ids) == (("Ana", "Redis"), ("t1", "t2"))
    assert doc.to_dict()["entities"] == ["Ana", "Redis"]


@pytest.mark.parametrize(
    "bad",
    [
        {"confidence": 1.5},
        {"confidence": "high"},
        {"compression_level": -1},
        {"compression_level": 1.5},
        {"entities": [1]},
        {"index": "fulltext"},
        {"keyword_text": 3},
    ],
)
def test_bad_memory_fields_are_invalid(kb: trove.Store, bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        kb.add("x", **bad)  # type: ignore[arg-type]
    assert kb.stats().documents == 0


def _memories(kb: trove.Store) -> dict[str, str]:
    return {
        "low": kb.add("redis note low", importance=0.1, entities=["Redis"], source="chat"),
        "high": kb.add("redis note high", importance=0.9, confidence=0.4, entities=["Redis"]),
        "ana": kb.add("redis note ana", entities=["Ana", "Redis"], compression_level=1),
    }


def test_search_filters_by_importance_confidence_and_entities(kb: trove.Store) -> None:
    ids = _memories(kb)

    def found(**filters: object) -> set[str]:
        return {h.doc_id for h in kb.search("redis note", **filters)}  # type: ignore[arg-type]

    assert found(min_importance=0.5) == {ids["high"], ids["ana"]}
    assert found(min_confidence=0.5) == {ids["low"], ids["ana"]}
    assert found(entities=["Ana"]) == {ids["ana"]}
    assert found(entities=["Redis", "Ana"]) == {ids["ana"]}
    assert found(max_compression=0) == {ids["low"], ids["high"]}


def test_list_filters_without_a_query(kb: trove.Store) -> None:
    ids = _memories(kb)

    def listed(**filters: object) -> set[str]:
        return {d.id for d in kb.list(**filters).items}  # type: ignore[arg-type]

    assert listed(max_compression=0) == {ids["low"], ids["high"]}
    assert listed(min_importance=0.5, entities="Redis") == {ids["high"], ids["ana"]}
    assert listed(source="chat") == {ids["low"]}
    with pytest.raises(trove.InvalidQuery):
        kb.list(min_importance="high")


def test_reembed_and_check_leave_entries_kept_out_of_the_semantic_index(
    durable_target: str,
) -> None:
    from trove.check import check

    with trove.open(durable_target, embedder="hash:64") as kb:
        hidden = kb.add("walrus bookkeeping", index=False)
        payload = kb.add("", index="none", metadata={"walrus": 1})
        words = kb.add("walrus words only", index="keyword")
        found = kb.add("a walrus swims")
        assert check(kb).problems == []
        assert kb.reembed(missing=True) == 0
        assert kb.reembed("hash:64") == 1  # a new table: only the semantic entry
        for doc_id in (hidden, payload, words):
            assert kb.chunk_vectors(doc_id) == [None]
        hits = kb.search("walrus", mode="semantic", min_score=0)
        assert [h.doc_id for h in hits] == [found]
        assert check(kb).problems == []
