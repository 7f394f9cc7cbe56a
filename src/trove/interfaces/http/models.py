"""What ``trove serve`` answers, as typed models: they are the OpenAPI schema's responses.

Each mirrors a ``to_dict()`` of :mod:`trove.models`; ``tests/interfaces/test_http_contract``
checks every key a real response carries against these schemas, so they cannot drift.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    # Allow, not forbid: a field added to a model later must not turn answers into 500s
    # (nor be dropped); the contract test fails until the schema here describes it.
    model_config = ConfigDict(extra="allow")


class ChunkOut(_Out):
    index: int
    start: int
    end: int
    heading: str


class HitOut(_Out):
    doc_id: str
    score: float
    title: str
    source: str
    source_id: str | None
    snippet: str
    chunk: ChunkOut
    namespace: str
    doc_type: str
    author: str
    participants: list[str]
    timestamp: str | None
    url: str
    thread_id: str
    channel: str
    tags: list[str]
    metadata: dict[str, Any]
    scope: str
    importance: float | None
    author_tier: str = ""
    explain: dict[str, Any] | None = None
    linked_from: dict[str, Any] | None = None
    provenance: str | None = None
    confidence: float = 1.0
    entities: list[str] = []
    access_count: int = 0
    last_accessed: str | None = None
    created_at: str | None = None


class SearchOut(_Out):
    hits: list[HitOut]


class ItemOut(_Out):
    id: str
    text: str
    namespace: str
    scope: str
    session_id: str
    source: str
    source_id: str | None
    dedupe_key: str | None
    doc_type: str
    title: str
    author: str
    participants: list[str]
    timestamp: str | None
    url: str
    thread_id: str
    channel: str
    tags: list[str]
    metadata: dict[str, Any]
    content_hash: str
    importance: float | None
    author_tier: str
    created_at: str | None
    updated_at: str | None
    deleted_at: str | None
    expires_at: str | None
    confidence: float = 1.0
    compression_level: int = 0
    entities: list[str] = []
    source_turn_ids: list[str] = []
    canonical_id: str | None = None
    access_count: int = 0
    last_accessed: str | None = None
    indexed: str = "both"
    keyword_text: str | None = None
    semantic_text: str | None = None
    expired: bool
    deleted: bool
    vectors: list[list[float] | None] | None = Field(
        None, description="With ?with_vectors=true: each chunk's stored vector, in order."
    )


class PageOut(_Out):
    items: list[ItemOut]
    cursor: str | None


class IdOut(_Out):
    id: str


class DeletedOut(_Out):
    id: str
    deleted: bool
    already_deleted: bool


class OriginalOut(_Out):
    id: str
    name: str
    media_type: str
    size: int
    sha256: str


def original_dict(info: Any) -> dict[str, Any]:
    """An :class:`~trove.originals.OriginalInfo` as :class:`OriginalOut`."""
    return {
        "id": info.doc_id,
        "name": info.name,
        "media_type": info.media_type,
        "size": info.size,
        "sha256": info.sha256,
    }


class EdgeOut(_Out):
    src: str
    dst: str
    type: str
    weight: float
    created_at: str | None


class EdgesOut(_Out):
    edges: list[EdgeOut]


class RemovedOut(_Out):
    removed: int


class StatsOut(_Out):
    documents: int
    chunks: int
    deleted: int
    expired: int
    by_source: dict[str, int]
    by_doc_type: dict[str, int]
    by_namespace: dict[str, int]
    text_bytes: int
    file_bytes: int
    schema_version: int
    embedder: dict[str, Any] | None
    vectors: int
    expansion_cache: dict[str, Any] | None = None
    chunks_without_vectors: int = 0
    keyword_only: bool = False
    cache_bytes: int = 0


class HealthOut(_Out):
    status: str
    version: str


class ErrorDetail(_Out):
    code: str
    message: str
    details: list[dict[str, Any]] | None = None


class ErrorOut(_Out):
    error: ErrorDetail


_ERRORS = {
    400: "Bad request: an invalid query (`invalid_query`), malformed JSON, unknown parameter.",
    401: "No valid bearer token (`unauthorized`).",
    403: "Not allowed for this token (`forbidden`).",
    404: "No such item, or not yours (`not_found`): the same answer either way.",
    413: "The request body is over the server's limit (`payload_too_large`).",
    422: "The request does not match the schema (`invalid_request`) or a value cannot be "
    "stored (`invalid_input`).",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these statuses, each with the error body."""
    return {s: {"model": ErrorOut, "description": _ERRORS[s]} for s in statuses}


# The error statuses of the routes that read, and of those that write.
READ_ERRORS = error_responses(400, 401, 404, 422)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 413, 422)
