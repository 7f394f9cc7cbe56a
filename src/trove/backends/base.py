"""The seam between the store and where it keeps things.

The store (id rules, chunking, embedding, fusion, memory rules) is written once above a
backend; a backend only stores rows and answers index queries. SQLite implements it now;
PostgreSQL implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..models import Chunk, Document
from ..search.filters import Filters
from ..search.query import ParsedQuery


@dataclass(frozen=True)
class ChunkRow:
    """A chunk ready to store: its span, the text it covers and what is indexed with it."""

    chunk: Chunk
    head: str
    text: str
    text_hash: str


@dataclass(frozen=True)
class KeywordHit:
    """A document's best chunk for one retriever, with that retriever's score."""

    doc_id: str
    chunk_id: int
    score: float
    chunk: Chunk


class Backend(Protocol):
    def close(self) -> None: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str | None) -> None: ...
    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None: ...
    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]: ...
    def put_document(self, doc: Document, *, text: bool = True) -> None: ...
    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]: ...
    def set_deleted(self, doc_id: str, when: float | None) -> bool: ...
    def purge(self, now: float) -> list[str]: ...
    def find_by_hash(self, namespace: str, source: str, content_hash: str) -> list[Document]: ...
    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]: ...
    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[KeywordHit]: ...
    def filter_chunks(
        self, chunk_ids: Sequence[int], filters: Filters, now: float
    ) -> dict[int, tuple[str, Chunk]]: ...
    def candidate_chunks(self, filters: Filters, now: float) -> list[int]: ...
    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]: ...
    def stats(self, now: float) -> dict[str, Any]: ...
