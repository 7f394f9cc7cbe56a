"""LlamaIndex: a vector store over a trove store, and a retriever over hybrid search.

``TroveVectorStore`` keeps each node as a trove document of one source (``llamaindex``
unless told) keyed by its node id, its text as the document's text, its metadata as the
document's metadata (plus ``ref_doc_id``, so :meth:`delete` removes every node of a
source document). trove embeds the text with its own embedder, so LlamaIndex's node
embeddings are not stored and queries need none (``is_embedding_query`` is False;
:meth:`TroveVectorStore.as_index` is an index that needs no embedding model): a
query with ``query_str`` runs trove's search (``DEFAULT`` is semantic, ``HYBRID``
hybrid, ``TEXT_SEARCH``/``SPARSE`` keyword); one with only ``query_embedding`` is a
k-NN over the stored vectors (it must come from the same model).

Metadata filters (``AND`` of ``MetadataFilter``): ``==`` on any key (trove's ``source``,
``doc_type``, ``author`` or ``namespace``, else a metadata equality), ``in`` on
``source``/``doc_type``/``author``, ``contains``/``all`` on ``tags``, ``>=``/``>`` and
``<=``/``<`` on ``timestamp``. Anything else raises ``InvalidQuery`` naming it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from trove.adapters.common import provenance, search_vector
from trove.errors import InvalidQuery, MissingDependency
from trove.ids import document_id
from trove.models import Document
from trove.store import Store

try:
    from llama_index.core import MockEmbedding, VectorStoreIndex
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        BaseNode,
        MetadataMode,
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
    from llama_index.core.vector_stores.types import (
        BasePydanticVectorStore,
        FilterCondition,
        FilterOperator,
        MetadataFilters,
        VectorStoreQuery,
        VectorStoreQueryMode,
        VectorStoreQueryResult,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependency("llama-index-core", "llamaindex", "the LlamaIndex adapter") from exc

SOURCE = "llamaindex"
REF = "ref_doc_id"
_MODES = {
    VectorStoreQueryMode.DEFAULT: "semantic",
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.SEMANTIC_HYBRID: "hybrid",
    VectorStoreQueryMode.TEXT_SEARCH: "keyword",
    VectorStoreQueryMode.SPARSE: "keyword",
}
_FIELDS = ("source", "doc_type", "author", "namespace")


class TroveVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store kept in trove (a path or URL, or an open Store)."""

    stores_text: bool = True
    is_embedding_query: bool = False
    namespace: str = "default"
    source: str = SOURCE
    _store: Store = PrivateAttr()
    _owned: bool = PrivateAttr(default=False)

    def __init__(
        self,
        store: Store | str | os.PathLike[str] = ":memory:",
        *,
        namespace: str = "default",
        source: str = SOURCE,
        **open_options: Any,
    ) -> None:
        import trove

        super().__init__(namespace=namespace, source=source)  # type: ignore[call-arg]
        if isinstance(store, Store):
            self._store, self._owned = store, False
        else:
            self._store, self._owned = trove.open(store, **open_options), True

    @property
    def client(self) -> Store:
        return self._store

    def close(self) -> None:
        if self._owned:
            self._store.close()

    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        items = []
        for node in nodes:
            metadata = dict(node.metadata)
            if node.ref_doc_id:
                metadata[REF] = node.ref_doc_id
            title = metadata.get("title") or metadata.get("file_name") or ""
            items.append(
                {
                    "text": node.get_content(metadata_mode=MetadataMode.NONE),
                    "title": str(title),
                    "metadata": metadata,
                    "source": self.source,
                    "source_id": node.node_id,
                    "namespace": self.namespace,
                }
            )
        self._store.write_many(items)
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Tombstone every node of the source document ``ref_doc_id``."""
        for doc in self._mine():
            if doc.metadata.get(REF) == ref_doc_id:
                self._store.delete(doc.id)

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        if filters is not None:
            raise InvalidQuery("delete_nodes takes node ids; filters are not supported")
        for node_id in node_ids or []:
            doc = self._store.get(self._id(node_id))
            if doc is not None:
                self._store.delete(doc.id)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        if filters is not None:
            raise InvalidQuery("get_nodes takes node ids; filters are not supported")
        if node_ids is None:
            return [self._node(doc) for doc in self._mine()]
        docs = [self._store.get(self._id(node_id)) for node_id in node_ids]
        return [self._node(doc) for doc in docs if doc is not None]

    def clear(self) -> None:
        for doc in self._mine():
            self._store.delete(doc.id)

    def as_index(self, **kwargs: Any) -> VectorStoreIndex:
        """A ``VectorStoreIndex`` over this store that needs no embedding model.

        ``VectorStoreIndex.from_vector_store(store)`` asks LlamaIndex's settings for one
        (OpenAI's by default: a package and an API key), although trove embeds the text
        itself and queries by text. This index's model computes nothing (a one-number
        ``MockEmbedding``: the vectors it would give nodes are never stored); pass
        ``embed_model`` to use another."""
        kwargs.setdefault("embed_model", MockEmbedding(embed_dim=1))
        return VectorStoreIndex.from_vector_store(self, **kwargs)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        filters = {"namespace": self.namespace, **to_filters(query.filters)}
        limit = query.similarity_top_k
        if query.query_str:
            mode = _MODES.get(query.mode)
            if mode is None:
                raise InvalidQuery(f"query mode {query.mode.value!r} is not supported by trove")
            hits = self._store.search(query.query_str, mode=mode, limit=limit, **filters)
            found = [(self._store.get(h.doc_id), h.score) for h in hits]
        elif query.query_embedding is not None:
            found = list(search_vector(self._store, query.query_embedding, limit, filters))
        else:
            raise InvalidQuery("a query needs query_str or query_embedding")
        pairs = [(doc, score) for doc, score in found if doc is not None]
        nodes = [self._node(doc) for doc, _ in pairs]
        return VectorStoreQueryResult(
            nodes=nodes, similarities=[s for _, s in pairs], ids=[n.node_id for n in nodes]
        )

    def _id(self, node_id: str) -> str:
        return document_id(self.namespace, "workspace", self.source, node_id, None, "")

    def _mine(self) -> list[Document]:
        ids = [
            doc_id
            for _, doc_id, _, deleted in self._store.iter_source(self.namespace, self.source)
            if not deleted
        ]
        docs = [self._store.get(doc_id) for doc_id in ids]
        return [doc for doc in docs if doc is not None]

    def _node(self, doc: Document) -> TextNode:
        metadata = dict(doc.metadata)
        ref = metadata.pop(REF, None)
        mine = doc.source == self.source and doc.source_id
        node = TextNode(
            id_=doc.source_id if mine else doc.id,
            text=doc.text,
            metadata=metadata if mine else {**metadata, **provenance(doc)},
        )
        if ref:
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=str(ref))
        return node


def to_filters(filters: MetadataFilters | None) -> dict[str, Any]:
    """LlamaIndex metadata filters as trove's search filters (see the module doc)."""
    if filters is None:
        return {}
    if filters.condition not in (None, FilterCondition.AND):
        raise InvalidQuery("trove's filters combine with AND only")
    found: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            raise InvalidQuery("nested metadata filters are not supported by trove")
        key, value, op = item.key, item.value, item.operator
        if op == FilterOperator.EQ and key in _FIELDS:
            found[key] = value
        elif op == FilterOperator.IN and key in _FIELDS[:3]:
            found[key] = list(value) if isinstance(value, list | tuple) else [value]
        elif key == "tags" and op in (FilterOperator.CONTAINS, FilterOperator.ALL):
            found["tags"] = list(value) if isinstance(value, list | tuple) else [value]
        elif key == "timestamp" and op in (FilterOperator.GTE, FilterOperator.GT):
            found["since"] = value
        elif key == "timestamp" and op in (FilterOperator.LTE, FilterOperator.LT):
            found["until"] = value
        elif op == FilterOperator.EQ:
            metadata[key] = value
        else:
            raise InvalidQuery(f"filter {key} {op.value} is not supported by trove")
    if metadata:
        found["metadata"] = metadata
    return found


class TroveRetriever(BaseRetriever):
    """A LlamaIndex retriever over trove's hybrid search (or ``mode``), with trove's
    filters; each node carries its provenance, and its score."""

    def __init__(
        self, store: Store, *, mode: str = "hybrid", limit: int = 4, **filters: Any
    ) -> None:
        super().__init__()
        self.store = store
        self.mode = mode
        self.limit = limit
        self.filters = filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.store.search(
            query_bundle.query_str, mode=self.mode, limit=self.limit, **self.filters
        )
        found = []
        for hit in hits:
            doc = self.store.get(hit.doc_id)
            if doc is None:
                continue
            metadata = {**doc.metadata, **provenance(doc), "snippet": hit.snippet}
            # The LLM sees the provenance (to cite ids), not the snippet of the same text.
            node = TextNode(
                id_=doc.id,
                text=doc.text,
                metadata=metadata,
                excluded_llm_metadata_keys=["snippet"],
                excluded_embed_metadata_keys=["snippet"],
            )
            found.append(NodeWithScore(node=node, score=hit.score))
        return found
