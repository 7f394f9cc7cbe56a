"""The LlamaIndex adapter against the real llama-index-core: a vector store used by
VectorStoreIndex, metadata filters, delete by source document, and a hybrid retriever."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")
from llama_index.core import Document, MockEmbedding, StorageContext, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

import trove
from trove.adapters.llamaindex import TroveRetriever, TroveVectorStore

DOCS = [
    Document(
        text="Redis is dropped; the cache lives in process.",
        doc_id="d-redis",
        metadata={"team": "infra", "title": "Cache"},
    ),
    Document(
        text="Sessions are stored in SQLite with WAL.",
        doc_id="d-sessions",
        metadata={"team": "infra"},
    ),
    Document(
        text="The design review moved to Thursday.",
        doc_id="d-review",
        metadata={"team": "product"},
    ),
]


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[TroveVectorStore]:
    store = TroveVectorStore(tmp_path / "kb.db", embedder="hash:128")
    yield store
    store.close()


def index(vs: TroveVectorStore) -> VectorStoreIndex:
    context = StorageContext.from_defaults(vector_store=vs)
    return VectorStoreIndex.from_documents(
        DOCS,
        storage_context=context,
        embed_model=MockEmbedding(embed_dim=8),
        transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)],
    )


def test_vector_store_index_round_trip(vs: TroveVectorStore) -> None:
    idx = index(vs)
    retriever = idx.as_retriever(similarity_top_k=1)
    found = retriever.retrieve("where does the cache live")
    assert found[0].node.get_content() == DOCS[0].text
    assert found[0].node.ref_doc_id == "d-redis"
    assert found[0].node.metadata == {"team": "infra", "title": "Cache"}
    assert vs.client.get(vs._id(found[0].node.node_id)).title == "Cache"  # type: ignore[union-attr]
    hybrid = idx.as_retriever(similarity_top_k=2, vector_store_query_mode="hybrid")
    assert {n.node.ref_doc_id for n in hybrid.retrieve("sessions sqlite")} >= {"d-sessions"}


def test_metadata_filters(vs: TroveVectorStore) -> None:
    index(vs)
    where = MetadataFilters(filters=[MetadataFilter(key="team", value="product")])
    result = vs.query(
        VectorStoreQuery(query_str="cache sessions review", similarity_top_k=5, filters=where)
    )
    assert [n.ref_doc_id for n in result.nodes] == ["d-review"]
    assert len(result.similarities or []) == 1 and result.ids == [result.nodes[0].node_id]
    keyword = VectorStoreQuery(
        query_str="stored",
        similarity_top_k=5,
        mode=VectorStoreQueryMode.TEXT_SEARCH,
        filters=MetadataFilters(
            filters=[
                MetadataFilter(key="source", value="llamaindex"),
                MetadataFilter(key="team", value="infra", operator=FilterOperator.EQ),
            ]
        ),
    )
    assert [n.ref_doc_id for n in vs.query(keyword).nodes] == ["d-sessions"]
    with pytest.raises(trove.InvalidQuery, match="team !="):
        vs.query(
            VectorStoreQuery(
                query_str="x",
                filters=MetadataFilters(
                    filters=[MetadataFilter(key="team", value="a", operator=FilterOperator.NE)]
                ),
            )
        )
    with pytest.raises(trove.InvalidQuery, match="AND only"):
        vs.query(
            VectorStoreQuery(
                query_str="x",
                filters=MetadataFilters(
                    filters=[MetadataFilter(key="team", value="a")], condition=FilterCondition.OR
                ),
            )
        )


def test_query_by_embedding_delete_and_get_nodes(vs: TroveVectorStore) -> None:
    index(vs)
    embedder = vs.client.embedder
    assert embedder is not None
    vector = embedder.embed_query("Sessions are stored in SQLite with WAL.").tolist()
    result = vs.query(VectorStoreQuery(query_embedding=vector, similarity_top_k=1))
    assert result.nodes[0].ref_doc_id == "d-sessions"
    assert len(vs.get_nodes()) == 3
    vs.delete("d-sessions")
    assert {n.ref_doc_id for n in vs.get_nodes()} == {"d-redis", "d-review"}
    result = vs.query(VectorStoreQuery(query_embedding=vector, similarity_top_k=3))
    assert "d-sessions" not in {n.ref_doc_id for n in result.nodes}
    node_id = vs.get_nodes()[0].node_id
    vs.delete_nodes([node_id])
    assert node_id not in {n.node_id for n in vs.get_nodes()}
    vs.clear()
    assert vs.get_nodes() == []


def test_hybrid_retriever_carries_provenance(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder="hash:128") as kb:
        kb.add(
            "We drop Redis and keep the cache in process.",
            title="Standup",
            author="ana",
            source="notes",
            tags=["decision"],
        )
        kb.add("Lunch is at noon.", title="Lunch", source="notes")
        found = TroveRetriever(kb, limit=1, tags=["decision"]).retrieve("redis cache")
        meta = found[0].node.metadata
        assert (meta["title"], meta["author"], meta["tags"]) == ("Standup", "ana", ["decision"])
        assert "«" in meta["snippet"] and found[0].score is not None
        context = found[0].node.get_content(metadata_mode=MetadataMode.LLM)
        assert "title: Standup" in context and "snippet" not in context


def test_an_index_over_the_store_needs_no_embedding_model(vs: TroveVectorStore) -> None:
    # LlamaIndex's default model is OpenAI's (a package and a key this machine lacks):
    # as_index() must not ask for it, for writing nodes or for querying them.
    idx = vs.as_index(transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)])
    for doc in DOCS:
        idx.insert(doc)
    found = idx.as_retriever(similarity_top_k=1).retrieve("where does the cache live")
    assert found[0].node.ref_doc_id == "d-redis"
    assert vs.client.stats().documents == len(DOCS)
