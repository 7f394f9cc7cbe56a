"""Query variants: each phrasing searched, lists fused, documents once, best evidence kept."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import trove
from helpers.llm_server import FakeLLM
from trove.embedders.base import Embedder
from trove.errors import InvalidQuery
from trove.llm import ChatModel
from trove.search.variants import MAX_VARIANTS

if TYPE_CHECKING:
    import numpy as np


@pytest.fixture
def kb() -> trove.Store:
    store = trove.open(":memory:", embedder=None)
    store.add("Redis was dropped in favour of Postgres queues.", title="queues", source_id="q")
    store.add("We picked SQLite for the local cache of embeddings.", title="cache", source_id="c")
    store.add("The standup moved to ten o'clock on Mondays.", title="standup", source_id="s")
    return store


def test_a_variant_finds_what_the_query_alone_misses(kb: trove.Store) -> None:
    assert kb.search("database decision") == []
    hits = kb.search("database decision", variants=["sqlite", "redis postgres"])
    assert {h.source_id for h in hits} == {"c", "q"}


def test_each_document_appears_once_with_its_best_evidence(kb: trove.Store) -> None:
    hits = kb.search("redis", variants=["redis queues postgres", "queues"], explain=True)
    assert [h.source_id for h in hits] == ["q"]
    explain = hits[0].explain
    assert explain is not None
    assert [v["query"] for v in explain["variants"]] == [
        "redis",
        "redis queues postgres",
        "queues",
    ]
    best = max(explain["variants"], key=lambda v: v["score"])
    assert explain["found_by"] == best["query"]
    assert explain["variant_fusion"] == "one_pass"
    assert "keyword" in explain  # the search's own explanation is kept
    assert "«Redis»" in hits[0].snippet and "«queues»" in hits[0].snippet  # every phrasing's words


def test_explain_does_not_change_the_results(kb: trove.Store) -> None:
    for variants in (["sqlite cache", "queues"], ["standup", "redis postgres"]):
        plain = kb.search("database decision", variants=variants)
        explained = kb.search("database decision", variants=variants, explain=True)
        assert [(h.doc_id, h.score) for h in plain] == [(h.doc_id, h.score) for h in explained]


def test_ranking_rewards_documents_found_by_several_variants(kb: trove.Store) -> None:
    plain = kb.search("standup sqlite")
    fused = kb.search("standup sqlite", variants=["local sqlite cache", "embeddings cache"])
    assert plain[0].source_id == "s" or len(plain) == 2
    assert fused[0].source_id == "c"  # three phrasings agree on it


def test_explain_says_which_variant_found_a_document(kb: trove.Store) -> None:
    hits = kb.search("meeting time", variants=["standup"], explain=True)
    assert hits[0].source_id == "s"
    assert hits[0].explain is not None
    assert hits[0].explain["found_by"] == "standup"
    assert hits[0].explain["variants"][0]["origin"] == "caller"


def test_variants_are_checked(kb: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="list of strings"):
        kb.search("x", variants="sqlite")  # type: ignore[arg-type]
    with pytest.raises(InvalidQuery, match="at most"):
        kb.search("x", variants=[f"v{i}" for i in range(MAX_VARIANTS + 1)])
    with pytest.raises(InvalidQuery, match="expand"):
        kb.search("x", expand="maybe")
    # blank variants and repeats of the query cost nothing
    assert kb.search("redis", variants=["  ", "REDIS"]).variants == ()


def test_results_keep_filters_and_limit(kb: trove.Store) -> None:
    kb.add("SQLite in another namespace", namespace="other")
    hits = kb.search("sqlite", variants=["redis", "standup"], limit=2)
    assert len(hits) == 2
    assert all(h.namespace == "default" for h in hits)


def test_links_are_followed_from_the_fused_hits(kb: trove.Store) -> None:
    [cache] = kb.search("sqlite")
    [standup] = kb.search("standup")
    kb.link(cache.doc_id, standup.doc_id)
    hits = kb.search("embeddings", variants=["local cache"], expand=1)
    assert [h.source_id for h in hits] == ["c", "s"]
    assert hits[1].linked_from is not None
    with pytest.raises(InvalidQuery, match="string"):
        kb.search(3, variants=["x"])  # type: ignore[arg-type]


def test_the_phrasings_are_searched_in_one_pass(
    kb: trove.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched = []
    keyword_search = kb.backend.keyword_search

    def counted(query, *args, **kwargs):  # type: ignore[no-untyped-def]
        searched.append(query.words)
        return keyword_search(query, *args, **kwargs)

    monkeypatch.setattr(kb.backend, "keyword_search", counted)
    hits = kb.search("database decision", variants=["sqlite", "redis postgres", "standup"])
    assert {h.source_id for h in hits} == {"c", "q", "s"}
    # one ranking over the union of the phrasings' words, the query's first
    assert searched == [("database", "decision", "sqlite", "redis", "postgres", "standup")]


def test_hybrid_variants_search_each_phrasing_by_meaning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb = trove.open(":memory:", embedder="hash:64")
    kb.add("We picked SQLite for the local cache of embeddings.", source_id="c")
    kb.add("The standup moved to ten o'clock on Mondays.", source_id="s")
    searched, passes = [], []
    vector_search, vector_search_many = kb.backend.vector_search, kb.backend.vector_search_many

    def counted(lock, vector, *args, **kwargs):  # type: ignore[no-untyped-def]
        searched.append(vector)
        return vector_search(lock, vector, *args, **kwargs)

    def counted_many(lock, vectors, *args, **kwargs):  # type: ignore[no-untyped-def]
        passes.append(len(vectors))
        return vector_search_many(lock, vectors, *args, **kwargs)

    monkeypatch.setattr(kb.backend, "vector_search", counted)
    monkeypatch.setattr(kb.backend, "vector_search_many", counted_many)
    hits = kb.search("sqlite", variants=["local cache", "embeddings"], mode="hybrid")
    assert hits[0].source_id == "c"
    # Each phrasing's own k-NN results, all three in one pass of the index.
    assert passes == [3] and searched == []
    hits = kb.search("sqlite", variants=["local cache", "embeddings"], explain=True)
    assert passes == [3, 3] and len(searched) == 3  # explain: each phrasing alone as well
    assert hits[0].explain is not None and len(hits[0].explain["variants"]) == 3


def test_phrasings_with_one_vector_are_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    kb = trove.open(":memory:", embedder="hash:64")  # a bag of words: order is lost
    kb.add("We picked SQLite for the local cache of embeddings.", source_id="c")
    kb.add("The standup moved to ten o'clock on Mondays.", source_id="s")
    passes = []
    vector_search_many = kb.backend.vector_search_many

    def counted_many(lock, vectors, *args, **kwargs):  # type: ignore[no-untyped-def]
        passes.append(len(vectors))
        return vector_search_many(lock, vectors, *args, **kwargs)

    monkeypatch.setattr(kb.backend, "vector_search_many", counted_many)
    variants = ["cache local", "local cache", "standup"]
    hits = kb.search("sqlite", variants=variants, mode="semantic")
    assert passes == [3]  # "cache local" and "local cache": one vector, one search
    alone = kb.search("sqlite", variants=["local cache", "standup"], mode="semantic")
    assert [(h.doc_id, h.score) for h in hits] == [(h.doc_id, h.score) for h in alone]


def test_variants_and_enrichment_explain_both(fake_llm: FakeLLM, tmp_path: Path) -> None:
    text = "Sprint 14 retro: the deploy broke twice because the config drifted."
    fake_llm.answers[text] = {"summary": "A retrospective.", "keywords": ["postmortem"]}
    model = ChatModel("tiny", base_url=fake_llm.url, timeout=0.5)
    kb = trove.open(tmp_path / "kb.db", embedder=None, llm=model)
    kb.add(text, source_id="retro", enrich=True)
    kb.add("The config of the deploy lives in git.", source_id="git")
    hits = kb.search("postmortem", variants=["config drifted"], explain=True)
    by_id = {h.source_id: h for h in hits}
    retro = by_id["retro"]
    assert retro.explain is not None and retro.provenance == "original"
    assert retro.explain["found_by"] == "config drifted"
    assert set(retro.explain["enrichment"]) == {"original", "enriched"}


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_variants_on_every_backend(store_target: str, mode: str) -> None:
    with trove.open(store_target, embedder="hash:64") as kb:
        kb.add("Redis was dropped in favour of Postgres queues.", source_id="q")
        kb.add("We picked SQLite for the local cache of embeddings.", source_id="c")
        kb.add("The standup moved to ten o'clock on Mondays.", source_id="s")
        # The vector index loads in the background; until then a k-NN search scores
        # exactly, after it from int16 codes (within 3e-5): compare like with like.
        kb.warm()
        hits = kb.search("database decision", variants=["sqlite", "redis"], mode=mode)
        assert {h.source_id for h in hits[:2]} == {"c", "q"}
        explained = kb.search(
            "database decision", variants=["sqlite", "redis"], mode=mode, explain=True
        )
        assert [(h.doc_id, h.score) for h in explained] == [(h.doc_id, h.score) for h in hits]
        found_by = {h.source_id: (h.explain or {})["found_by"] for h in explained}
        assert found_by["c"] == "sqlite" and found_by["q"] == "redis"


def test_a_raw_query_keeps_its_own_syntax(kb: trove.Store) -> None:
    hits = kb.search('"local cache"', raw=True, variants=["redis"], mode="keyword")
    assert [h.source_id for h in hits] == ["c"]  # raw trees are not merged with variants


class Compass(Embedder):
    """Texts about the sea point east, queries north, notes near north (a little apart)."""

    model_id = "test:compass"
    dimension = 3

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        rows = [
            [0.0, 1.0, 0.0]
            if "sea" in text.split()
            else [1.0, 0.0, 0.2 + len(text) % 5 / 10]
            if text.startswith("notes")
            else [1.0, 0.0, 0.0]
            for text in texts
        ]
        vectors = np.asarray(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("target", ["memory", "file"])
def test_a_document_near_one_variant_only_is_found(target: str, tmp_path: Path) -> None:
    """Searched at the phrasings' mean, the one document near the variant alone ranked
    below the query's neighbours; each phrasing searched and the lists fused, it is
    found."""
    path = ":memory:" if target == "memory" else tmp_path / "kb.db"
    with trove.open(path, embedder=Compass()) as kb:
        for i in range(6):
            kb.add(f"notes on the land, part {i}{'x' * i}", source_id=f"land{i}")
        kb.add("a sea voyage", source_id="voyage")
        query = "what happened on land"
        plain = kb.search(query, mode="semantic", limit=3)
        assert "voyage" not in {h.source_id for h in plain}
        hits = kb.search(query, variants=["the sea", "land"], mode="semantic", limit=3)
        assert "voyage" in {h.source_id for h in hits}
