"""The HTTP API's request bodies (pydantic models; their fields are the OpenAPI schema)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trove.interfaces.http.auth import SESSION_HEADER

ItemScope = Literal["workspace", "session", "global"]

# --- request bodies -----------------------------------------------------------------------
# Extra fields are passed on, not dropped: the library names unknown ones (422), refuses
# another namespace (403) and ignores a caller's author_tier, as it does for every interface.


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow")


class WriteBody(_Body):
    text: str = Field(description="The memory or document, stored and returned exactly.")
    title: str | None = None
    scope: ItemScope | None = Field(
        None,
        description="workspace (default): the namespace; session: only this session "
        f"({SESSION_HEADER} or the token's session); global: every namespace reads it, "
        "only callers with allow_global write it.",
    )
    dedupe_key: str | None = Field(
        None, description="Your key for the item: writing it again updates the same item."
    )
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    importance: float | None = Field(None, description="Your own weight, e.g. 0..1.")
    ttl: float | None = Field(None, description="Seconds until the item expires.")
    expires_at: str | float | None = Field(None, description="ISO-8601 expiry (or ttl).")
    source: str | None = None
    source_id: str | None = None
    doc_type: str | None = None
    author: str | None = None
    participants: list[str] | None = None
    timestamp: str | float | None = Field(None, description="ISO-8601 or epoch seconds.")
    url: str | None = None
    thread_id: str | None = None
    channel: str | None = None
    confidence: float | None = Field(None, description="How sure the writer is, 0..1.")
    compression_level: int | None = Field(
        None, ge=0, description="0 as said; 1 and up once folded into a summary."
    )
    on_conflict: Literal["replace", "merge", "keep"] | None = Field(
        None,
        description="If the key is stored: replace (default) the item, merge in only the "
        "fields sent, or keep the stored item untouched.",
    )
    chunks: list[list[int | str]] | None = Field(
        None,
        description="Your own chunk boundaries: [start, end] or [start, end, heading] "
        "in characters of text, in order, covering all but blank space.",
    )


class UpdateBody(_Body):
    text: str | None = None
    title: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = Field(None, description="Replaces the metadata.")
    importance: float | None = None
    ttl: float | None = None
    expires_at: str | float | None = None
    compression_level: int | None = Field(None, ge=0)


class SearchBody(_Body):
    query: str = Field("", description="The query (may be empty with `vector`).")
    mode: Literal["keyword", "semantic", "hybrid"] | None = None
    limit: int = Field(10, ge=0, le=1000)
    expand: Annotated[int, Field(ge=0, le=3)] | Literal["llm"] | None = Field(
        None,
        description='Also return documents linked to hits (1..3 links away), or "llm": '
        "search the configured LLM's variants of the query too (falls back to the plain "
        "search, marked degraded, if the LLM fails).",
    )
    variants: list[str] | None = Field(
        None, description="Other phrasings of the query, each searched; the lists are fused."
    )
    explain: bool = False
    scope: list[ItemScope] | None = None
    source: list[str] | None = None
    doc_type: list[str] | None = None
    author: list[str] | None = None
    tags: list[str] | None = Field(None, description="Hits have all of these tags.")
    since: str | float | None = None
    until: str | float | None = None
    metadata: dict[str, Any] | None = Field(None, description="Equality on metadata keys.")
    rerank: Literal["memory"] | dict[str, float] | None = Field(
        None, description="Blend in recency, importance and use (`memory`, or weights)."
    )
    vector: list[float] | None = Field(None, description="Your own query embedding.")
    cluster: str | None = Field(None, description="Only members of this cluster.")
    entities: list[str] | None = Field(None, description="Hits are about all of these.")
    min_importance: float | None = Field(None, description="Importance at least.")
    min_confidence: float | None = Field(None, ge=0, le=1, description="Confidence at least.")
    max_compression: int | None = Field(
        None, ge=0, description="Only items at most this summarised (0: not yet)."
    )
    collapse_duplicates: bool = Field(True, description="One hit per duplicate group.")
    min_score: float | None = Field(
        None, ge=0, le=1, description="Leave out hits scoring below this (default: none)."
    )
    with_text: bool = Field(False, description="Each hit carries its best chunk's text.")
    context: int = Field(0, ge=0, le=10, description="Also this many chunks around it.")
    max_tokens: int | None = Field(
        None, ge=1, description="As many hits with text as fit in this many tokens."
    )

    def arguments(self) -> tuple[str, dict[str, Any]]:
        """The query and the options for ``Workspace.search``: the fields sent, each under
        its :class:`~trove.search.request.SearchRequest` name (the field's own)."""
        options = self.model_dump(exclude_unset=True)
        return options.pop("query", ""), options


class LinkBody(_Body):
    src: str
    dst: str
    type: str = "relates_to"
    weight: float = 1.0
