"""LangChain: a ``VectorStore`` over a trove store, and a retriever over hybrid search.

``TroveVectorStore`` keeps each LangChain document as a trove document of one source
(``langchain`` unless told), keyed by its LangChain id (a new UUID when it has none), so
adding the same id again updates it in place. Its metadata is stored as given and comes
back as given; ``provenance=True`` adds the trove fields (``trove_id``, ``source``,
``title``, ``author``, ``timestamp`` ...). A document trove holds from elsewhere (an
ingested note, say) comes back with its trove id as its LangChain id.

Vectors come from the store's own embedder, unless a LangChain ``Embeddings`` is given:
then that model embeds both the documents and the queries (the store records it as
``langchain:<class name>``). Searches take trove's filters as keyword arguments
(``source``, ``doc_type``, ``author``, ``tags``, ``since``, ``until``, ``namespace``,
``metadata``; LangChain's ``filter={...}`` is metadata equality) and ``mode``
(``semantic`` by default, as a vector store's similarity search is; ``hybrid`` or
``keyword``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from trove.adapters.common import chunk_vectors, provenance, search_vector
from trove.errors import InvalidQuery, MissingDependency
from trove.ids import document_id
from trove.models import Document as TroveDocument
from trove.store import Store

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore
    from langchain_core.vectorstores.utils import maximal_marginal_relevance
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependency("langchain-core", "langchain", "the LangChain adapter") from exc

from trove.embedders.base import Embedder, l2_normalize

SOURCE = "langchain"
_SEARCH_OPTIONS = ("mode", "filter")


class LangChainEmbedder(Embedder):
    """A LangChain ``Embeddings`` as a trove embedder (documents and queries apart)."""

    def __init__(self, embeddings: Embeddings, model_id: str | None = None) -> None:
        self.embeddings = embeddings
        self.model_id = model_id or f"langchain:{type(embeddings).__name__}"
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:  # type: ignore[override]
        if self._dimension is None:
            self._dimension = len(self.embeddings.embed_query("dimension probe"))
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return l2_normalize(np.asarray(self.embeddings.embed_documents(list(texts))))

    def embed_query(self, text: str) -> np.ndarray:
        return l2_normalize(np.asarray([self.embeddings.embed_query(text)]))[0]


class TroveVectorStore(VectorStore):
    """A LangChain vector store kept in trove (a file, ``:memory:`` or a PostgreSQL URL,
    or an open :class:`trove.Store`)."""

    def __init__(
        self,
        store: Store | str | os.PathLike[str] = ":memory:",
        embedding: Embeddings | None = None,
        *,
        namespace: str = "default",
        source: str = SOURCE,
        provenance: bool = False,
        **open_options: Any,
    ) -> None:
        import trove

        self._embeddings = embedding
        if isinstance(store, Store):
            if embedding is not None:
                raise InvalidQuery(
                    "an open store keeps its own embedder; pass a path to use a LangChain one"
                )
            self.store, self._owned = store, False
        else:
            if embedding is not None:
                open_options["embedder"] = LangChainEmbedder(embedding)
            self.store, self._owned = trove.open(store, **open_options), True
        self.namespace = namespace
        self.source = source
        self.provenance = provenance

    def close(self) -> None:
        if self._owned:
            self.store.close()

    @property
    def embeddings(self) -> Embeddings | None:
        return self._embeddings

    # --- writing ----------------------------------------------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store texts (with their metadata) under their ids, new UUIDs where none given.

        Keyword arguments are trove fields given to every text (``title``, ``tags``,
        ``author``, ``timestamp`` ...)."""
        texts = list(texts)
        metadatas = metadatas or [{} for _ in texts]
        given: list[str | None] = list(ids) if ids else [None] * len(texts)
        keys = [str(i) if i else str(uuid.uuid4()) for i in given]
        items = [
            {
                **kwargs,
                "text": text,
                "metadata": dict(meta or {}),
                "source": self.source,
                "source_id": key,
                "namespace": self.namespace,
            }
            for text, meta, key in zip(texts, metadatas, keys, strict=True)
        ]
        self.store.write_many(items)
        return keys

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Tombstone the documents with these ids (ids not stored are ignored)."""
        for key in ids or []:
            doc = self._find(key)
            if doc is not None:
                self.store.delete(doc.id)
        return True

    # --- reading ----------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        found = [self._find(key) for key in ids]
        return [self._document(doc) for doc in found if doc is not None]

    def _find(self, key: str) -> TroveDocument | None:
        mine = document_id(self.namespace, "workspace", self.source, key, None, "")
        return self.store.get(mine) or self.store.get(key)

    def _document(self, doc: TroveDocument) -> Document:
        metadata = dict(doc.metadata)
        if self.provenance:
            metadata.update(provenance(doc))
        key = doc.source_id if doc.source == self.source and doc.source_id else doc.id
        return Document(page_content=doc.text, metadata=metadata, id=key)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Documents for ``query`` with trove's score (higher is better)."""
        mode, filters = self._options(kwargs)
        hits = self.store.search(query, mode=mode, limit=k, **filters)
        docs = {hit.doc_id: self.store.get(hit.doc_id) for hit in hits}
        return [
            (self._document(doc), hit.score)
            for hit in hits
            if (doc := docs[hit.doc_id]) is not None
        ]

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        _, filters = self._options(kwargs)
        found = search_vector(self.store, embedding, k, filters)
        return [self._document(doc) for doc, _ in found]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda score: score  # trove's scores already read as relevance in [0, 1]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` documents among the ``fetch_k`` best that are relevant and unlike each
        other (the chunks' stored vectors measure both)."""
        mode, filters = self._options(kwargs)
        hits = self.store.search(query, mode=mode, limit=fetch_k, **filters)
        embedder = self.store.embedder
        if not hits or embedder is None:
            return self.similarity_search(query, k, **kwargs)
        vectors = chunk_vectors(self.store, [(h.doc_id, h.chunk.index) for h in hits])
        kept = [(h, v) for h, v in zip(hits, vectors, strict=True) if v is not None]
        chosen = maximal_marginal_relevance(
            embedder.embed_query(query),
            [v.tolist() for _, v in kept],
            lambda_mult=lambda_mult,
            k=k,
        )
        docs = [self.store.get(kept[i][0].doc_id) for i in chosen]
        return [self._document(doc) for doc in docs if doc is not None]

    def _options(self, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        options = dict(kwargs)
        mode = options.pop("mode", None) or "semantic"
        where = options.pop("filter", None)
        if where:
            options["metadata"] = {**(options.get("metadata") or {}), **where}
        options.setdefault("namespace", self.namespace)
        return mode, options

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None = None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> TroveVectorStore:
        """A store (``path=":memory:"`` unless given) holding ``texts``."""
        path = kwargs.pop("path", ":memory:")
        options = {k: kwargs.pop(k) for k in ("namespace", "source", "provenance") if k in kwargs}
        store = cls(path, embedding, **options, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store


class TroveRetriever(BaseRetriever):
    """A LangChain retriever over trove's hybrid search (or ``mode``), with filters;
    each document carries its provenance (``trove_id``, ``title``, ``source`` ...),
    the search ``score`` and the matching ``snippet`` in its metadata. ``invoke(query,
    k=N, mode=..., source=...)`` overrides ``k``, ``mode`` and the filters for one call."""

    store: Any
    mode: str = "hybrid"
    k: int = 4
    filters: dict[str, Any] = Field(default_factory=dict)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k = kwargs.pop("k", self.k)
        mode = kwargs.pop("mode", self.mode)
        hits = self.store.search(query, mode=mode, limit=k, **{**self.filters, **kwargs})
        found = []
        for hit in hits:
            doc = self.store.get(hit.doc_id)
            if doc is None:
                continue
            metadata = {
                **doc.metadata,
                **provenance(doc),
                "score": hit.score,
                "snippet": hit.snippet,
            }
            found.append(Document(page_content=doc.text, metadata=metadata, id=doc.id))
        return found
