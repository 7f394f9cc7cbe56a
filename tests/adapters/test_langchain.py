"""The LangChain adapter against the real langchain-core, and LangChain's own standard
vector store tests (langchain-tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import VectorStore

import trove
from trove.adapters.langchain import TroveRetriever, TroveVectorStore

standard = pytest.importorskip("langchain_tests.integration_tests.vectorstores")
retrievers = pytest.importorskip("langchain_tests.integration_tests.retrievers")


class TestStandard(standard.VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:
        store = TroveVectorStore(":memory:", self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class TestStandardRetriever(retrievers.RetrieversIntegrationTests):
    """LangChain's own retriever tests: ``k`` in the constructor and in ``invoke``."""

    @property
    def retriever_constructor(self) -> type[TroveRetriever]:
        return TroveRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        store = trove.open(":memory:", embedder="hash:64")
        store.add_many([{"text": f"example note {i} about a query"} for i in range(6)])
        return {"store": store}

    @property
    def retriever_query_example(self) -> str:
        return "example query"


NOTES = [
    ("Redis is dropped; the cache lives in process.", {"team": "infra"}, "redis"),
    ("Sessions are stored in SQLite with WAL.", {"team": "infra"}, "sessions"),
    ("The design review moved to Thursday.", {"team": "product"}, "review"),
    ("Cats purr when they are content.", {"team": "pets"}, "cats"),
]


@pytest.fixture(params=["sqlite", "postgres"])
def lc(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TroveVectorStore]:
    if request.param == "postgres":
        target: str | Path = request.getfixturevalue("pg_target")
    else:
        target = tmp_path / "kb.db"
    store = TroveVectorStore(target, embedder="hash:128")
    store.add_texts(
        [t for t, _, _ in NOTES],
        [m for _, m, _ in NOTES],
        ids=[i for _, _, i in NOTES],
        tags=["note"],
    )
    yield store
    store.close()


def test_search_modes_filters_and_scores(lc: TroveVectorStore) -> None:
    assert lc.similarity_search("cache in process redis", k=1)[0].id == "redis"
    found = lc.similarity_search("stored", k=4, mode="keyword", filter={"team": "infra"})
    assert [d.id for d in found] == ["sessions"]
    scored = lc.similarity_search_with_score("design review thursday", k=2, mode="hybrid")
    assert scored[0][0].id == "review" and 0 < scored[0][1] <= 1 and scored[0][1] > scored[1][1]
    assert lc.similarity_search("cats", k=3, tags=["missing"]) == []
    relevance = lc.similarity_search_with_relevance_scores("cats purr", k=1)
    assert relevance[0][0].id == "cats" and relevance[0][1] > 0
    assert lc.get_by_ids(["cats"]) == [
        Document(id="cats", page_content=NOTES[3][0], metadata={"team": "pets"})
    ]


def test_vector_search_and_mmr(lc: TroveVectorStore) -> None:
    embedder = lc.store.embedder
    assert embedder is not None
    vector = embedder.embed_query("Sessions are stored in SQLite with WAL.").tolist()
    assert lc.similarity_search_by_vector(vector, k=1)[0].id == "sessions"
    assert lc.similarity_search_by_vector(vector, k=2, filter={"team": "pets"})[0].id == "cats"
    lc.add_texts(["Sessions are stored in SQLite with WAL!"], ids=["dup"])
    plain = [d.id for d in lc.similarity_search("sessions stored sqlite", k=2)]
    assert set(plain) == {"sessions", "dup"}
    diverse = [
        d.id
        for d in lc.max_marginal_relevance_search("sessions stored sqlite", k=2, lambda_mult=0.1)
    ]
    assert diverse[0] in {"sessions", "dup"} and diverse[1] not in {"sessions", "dup"}


def test_retriever_modes_and_provenance(lc: TroveVectorStore) -> None:
    retriever = lc.as_retriever(search_kwargs={"k": 1, "mode": "keyword", "source": "langchain"})
    assert [d.id for d in retriever.invoke("thursday")] == ["review"]
    hybrid = TroveRetriever(store=lc.store, k=2, filters={"tags": ["note"]})
    docs = hybrid.invoke("where does the cache live")
    assert docs[0].metadata["source_id"] == "redis" and docs[0].metadata["tags"] == ["note"]
    assert "«" in docs[0].metadata["snippet"] and docs[0].metadata["score"] > 0


def test_updates_deletes_and_foreign_documents(lc: TroveVectorStore) -> None:
    lc.add_documents(
        [Document(page_content="Redis is back.", metadata={"team": "infra"})], ids=["redis"]
    )
    assert lc.get_by_ids(["redis"])[0].page_content == "Redis is back."
    lc.delete(["redis", "never-stored"])
    assert lc.get_by_ids(["redis"]) == []
    note = lc.store.add("An ingested note about cats.", source="notes", title="Cats")
    found = lc.similarity_search("ingested note cats", k=1)
    assert found[0].id == note and lc.get_by_ids([note])[0].page_content.startswith("An ingested")
    lc.provenance = True
    assert lc.get_by_ids([note])[0].metadata["title"] == "Cats"


def test_from_texts_with_a_langchain_embeddings(tmp_path: Path) -> None:
    store = TroveVectorStore.from_texts(
        ["alpha", "beta"],
        DeterministicFakeEmbedding(size=16),
        ids=["a", "b"],
        path=tmp_path / "x.db",
    )
    try:
        assert store.similarity_search("beta", k=1)[0].id == "b"
        lock = store.store.stats().embedder
        assert lock is not None and lock["model_id"] == "langchain:DeterministicFakeEmbedding"
    finally:
        store.close()
    with trove.open(tmp_path / "x.db", embedder=None) as kb:
        assert kb.stats().documents == 2
    with trove.open(":memory:", embedder=None) as kb, pytest.raises(trove.InvalidQuery):
        TroveVectorStore(kb, DeterministicFakeEmbedding(size=4))
