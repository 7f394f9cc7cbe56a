"""The core MCP knowledge tools: parse the model's arguments, call one
:class:`~trove.workspace.Workspace` method (from
:class:`~trove.interfaces.workspaces.Workspaces`), return compact JSON (:mod:`.format`).

The workspace comes from the server's configuration, never from the model: the tools
have no namespace argument, and an argument that is not in a tool's schema
(``namespace``, ``author_tier``, a misspelt filter) is refused with ``invalid_request``
(see :mod:`.schema`). Writes are stamped ``author_tier="llm"``.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime to
# build each tool's JSON schema.

from contextlib import AbstractContextManager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from trove.interfaces import clusters as cluster_ops
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp.callers import Callers
from trove.interfaces.mcp.format import (
    MCP_TOKENS,
    document,
    given,
    preview,
    search_options,
    search_reply,
)
from trove.interfaces.mcp.params import (
    AboutEntities,
    Around,
    Authors,
    CollapseDuplicates,
    Compression,
    Confidence,
    DedupeKey,
    DocTypes,
    Entities,
    Expand,
    GivenChunks,
    HasTags,
    Id,
    Importance,
    InCluster,
    Index,
    ItemScope,
    KeywordText,
    Limit,
    MaxCompression,
    MaxTokens,
    Memory,
    Metadata,
    MetadataEquals,
    MinConfidence,
    MinImportance,
    MinScore,
    Mode,
    OnConflict,
    OwnVector,
    Query,
    QueryVector,
    Rerank,
    Scopes,
    SemanticText,
    Since,
    Source,
    Sources,
    Tags,
    Timestamp,
    Title,
    Ttl,
    Until,
    Variants,
    WriteScope,
)
from trove.interfaces.workspaces import Workspaces
from trove.probe import MAX_PAIRS, probe
from trove.search.calibration import MCP_FLOOR
from trove.store import Store
from trove.workspace import Workspace

AUTHOR_TIER = "llm"


class KnowledgeTools:
    """The tools, bound to one store and configuration."""

    def __init__(self, store: Store, config: ServerConfig) -> None:
        self.workspaces = Workspaces(
            store, author_tier=AUTHOR_TIER, max_content_tokens=config.content_limit
        )
        self.config = config
        self.callers = Callers(self.workspaces, config)

    def knowledge_write(
        self,
        ctx: Context,
        text: Memory,
        title: Title = None,
        tags: Tags = None,
        scope: WriteScope = "workspace",
        dedupe_key: DedupeKey = None,
        importance: Importance = None,
        ttl_seconds: Ttl = None,
        metadata: Metadata = None,
        source: Source = None,
        timestamp: Timestamp = None,
        entities: Entities = None,
        confidence: Confidence = None,
        compression_level: Compression = None,
        index: Index = None,
        keyword_text: KeywordText = None,
        semantic_text: SemanticText = None,
        vector: OwnVector = None,
        on_conflict: OnConflict = None,
        chunks: GivenChunks = None,
    ) -> dict[str, Any]:
        """Save a memory (fact, decision, preference, note) so it can be found later, in this
        or future conversations. Returns its id."""
        item = given(
            text=text,
            title=title,
            tags=tags,
            scope=scope,
            dedupe_key=dedupe_key,
            importance=importance,
            ttl=ttl_seconds,
            metadata=metadata,
            source=source,
            timestamp=timestamp,
            on_conflict=on_conflict,
            entities=entities,
            confidence=confidence,
            compression_level=compression_level,
            index=index,
            keyword_text=keyword_text,
            semantic_text=semantic_text,
            vector=vector,
            chunks=chunks,
        )
        with self._workspace(ctx, write=True) as ws:
            return {"id": ws.write(item), "scope": scope}

    def knowledge_search(
        self,
        ctx: Context,
        query: Query,
        limit: Limit = 10,
        tags: HasTags = None,
        scope: Scopes = None,
        source: Sources = None,
        author: Authors = None,
        doc_type: DocTypes = None,
        since: Since = None,
        until: Until = None,
        metadata: MetadataEquals = None,
        mode: Mode = None,
        expand: Expand = None,
        variants: Variants = None,
        rerank: Rerank = None,
        cluster: InCluster = None,
        entities: AboutEntities = None,
        min_importance: MinImportance = None,
        min_confidence: MinConfidence = None,
        max_compression: MaxCompression = None,
        collapse_duplicates: CollapseDuplicates = True,
        vector: QueryVector = None,
        min_score: MinScore = MCP_FLOOR,
        max_tokens: MaxTokens = MCP_TOKENS,
        context: Around = 0,
    ) -> dict[str, Any]:
        """Search this workspace's knowledge by words and meaning, best first. Each result
        has an id, a score (the estimated chance it is relevant, 0 to 1), title, snippet
        («…» marks matches) and the text of its best passage with its heading; results
        below min_score (default 0.3) are left out and the text fits in max_tokens
        (default 2000). knowledge_get reads one in full. You can expand a query yourself:
        pass rephrasings in variants."""
        options = search_options(
            self.config.max_result_tokens,
            variants=variants,
            min_score=min_score,
            max_tokens=max_tokens,
            context=context,
            limit=limit,
            tags=tags,
            scope=scope,
            source=source,
            author=author,
            doc_type=doc_type,
            since=since,
            until=until,
            metadata=metadata,
            mode=mode,
            expand=expand,
            rerank=rerank,
            cluster=cluster,
            entities=entities,
            min_importance=min_importance,
            min_confidence=min_confidence,
            max_compression=max_compression,
            vector=vector,
            collapse_duplicates=collapse_duplicates,
        )
        with self._workspace(ctx) as ws:
            hits = ws.search(query, **options)
        return search_reply(hits, max_tokens, self.config.max_result_tokens)

    def knowledge_probe(
        self,
        ctx: Context,
        pairs: Annotated[
            list[dict[str, str]] | None,
            Field(
                max_length=MAX_PAIRS,
                description='Questions and the item each should find: [{"query": ..., '
                '"expected_doc": an id or source_id}]. Default: the pairs stored for '
                "this workspace.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Check your memory: how often each question finds its item (recall@1/5/10), and
        whether the store's rules hold (isolation, dedupe_key upsert, delete, ttl), as
        PASS/FAIL lines."""
        with self._workspace(ctx) as ws:
            return probe(ws, pairs).to_dict()

    def knowledge_get(
        self,
        ctx: Context,
        id: Annotated[
            str | None, Field(description="An item id, as the other tools return.")
        ] = None,
        dedupe_key: Annotated[
            str | None, Field(description="Or the dedupe_key the item was written with.")
        ] = None,
        source: Annotated[str | None, Field(description="Or its source, with source_id.")] = None,
        source_id: Annotated[str | None, Field(description="Its source_id (with source).")] = None,
        scope: Annotated[
            ItemScope, Field(description="The scope it was written in (with a key).")
        ] = "workspace",
        with_vectors: Annotated[
            bool, Field(description="Also return each passage's stored vector, in order.")
        ] = False,
    ) -> dict[str, Any]:
        """Read one item in full: its text and where it came from. Name it by id, or by the
        key it was written with (dedupe_key, or source and source_id)."""
        with self._workspace(ctx) as ws:
            if id is not None and (dedupe_key, source, source_id) == (None, None, None):
                doc, named = ws.get(id), f"id {id!r}"
            elif id is None:
                doc = ws.get_by_key(source, source_id, dedupe_key=dedupe_key, scope=scope)
                named = f"key {dedupe_key or source_id!r}"
            else:
                raise ToolError("invalid_request: give an id, or a key, not both")
            if doc is None:
                raise ToolError(f"not_found: no item with {named} (it may be deleted or expired)")
            vectors = {"vectors": ws.chunk_vectors(doc.id)} if with_vectors else {}
        return document(doc) | vectors

    def knowledge_update(
        self,
        ctx: Context,
        id: Id,
        text: Annotated[str | None, Field(description="The new text (replaces it).")] = None,
        title: Annotated[str | None, Field(description="The new title.")] = None,
        tags: Tags = None,
        metadata: Metadata = None,
        importance: Importance = None,
        ttl_seconds: Ttl = None,
        compression_level: Compression = None,
    ) -> dict[str, Any]:
        """Change an item's text, title, tags, metadata, importance, compression level or
        lifetime; its id and
        origin stay. Scope and dedupe_key cannot change: write a new item for that."""
        changes = given(
            text=text,
            title=title,
            tags=tags,
            metadata=metadata,
            importance=importance,
            ttl=ttl_seconds,
            compression_level=compression_level,
        )
        with self._workspace(ctx, write=True) as ws:
            return {"id": ws.update(id, **changes)}

    def knowledge_list(
        self,
        ctx: Context,
        scope: Annotated[
            list[ItemScope] | None, Field(description="Only items of these scopes (default: all).")
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="The cursor of the previous page; omit for the newest items."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Items per page.")] = 20,
        include_deleted: Annotated[bool, Field(description="Also list deleted items.")] = False,
        max_compression: MaxCompression = None,
    ) -> dict[str, Any]:
        """Browse items newest first, a page at a time. Pass the returned cursor back for the
        next page; a null cursor means there are no more. Texts are previews: use
        knowledge_get for the whole text. Expired items are listed with expired=true."""
        with self._workspace(ctx) as ws:
            page = ws.list(
                scope=scope,
                cursor=cursor,
                limit=limit,
                include_deleted=include_deleted,
                **given(max_compression=max_compression),
            )
        return {"items": [preview(doc) for doc in page.items], "cursor": page.cursor}

    def knowledge_delete(
        self,
        ctx: Context,
        id: Id,
        permanent: Annotated[
            bool, Field(description="Remove it for good (no restore), e.g. a wrong memory.")
        ] = False,
    ) -> dict[str, Any]:
        """Delete an item: it disappears from search and get (a person can restore it,
        unless permanent). Deleting it again succeeds with already_deleted=true."""
        with self._workspace(ctx, write=True) as ws:
            now_deleted = ws.delete(id, hard=permanent)
        return {"id": id, "deleted": True, "already_deleted": not now_deleted}

    def knowledge_link(
        self,
        ctx: Context,
        src: Annotated[str, Field(description="The id the link starts from.")],
        dst: Annotated[str, Field(description="The id the link points to.")],
        type: Annotated[
            str,
            Field(
                description="relates_to, supersedes (src replaces dst), derived_from (src "
                "was concluded from dst), replies_to, or a type of your own."
            ),
        ] = "relates_to",
        weight: Annotated[float, Field(ge=0, description="Strength of the link.")] = 1.0,
    ) -> dict[str, Any]:
        """Connect two items, e.g. a decision and its evidence. knowledge_search with
        expand=1 then returns linked items together. Linking again sets the weight."""
        with self._workspace(ctx, write=True) as ws:
            return ws.link(src, dst, type, weight).to_dict()

    def knowledge_cluster(
        self,
        ctx: Context,
        action: Annotated[
            Literal["create", "get", "list", "update", "decide", "add", "remove", "delete"],
            Field(
                description="create (name, summary, ids), get, list, update (summary, "
                "key_entities), decide (append a decision), add/remove (ids), delete."
            ),
        ],
        cluster_id: Annotated[str | None, Field(description="The cluster's id.")] = None,
        name: Annotated[str | None, Field(description="A new cluster's name.")] = None,
        summary: Annotated[
            str | None, Field(description="The rolling summary (replaces it); searchable.")
        ] = None,
        key_entities: Annotated[list[str] | None, Field(description="Key entities.")] = None,
        decision: Annotated[str | None, Field(description="A decision to log.")] = None,
        ids: Annotated[list[str] | None, Field(description="Item ids (members).")] = None,
    ) -> dict[str, Any]:
        """Group related memories in a named cluster with a rolling summary (kept current
        by you) and an append-only decision log; knowledge_search(cluster=ID) searches it."""
        with self._workspace(ctx, write=action not in ("get", "list")) as ws:
            return cluster_ops.run(
                ws,
                action,
                cluster_id=cluster_id,
                name=name,
                summary=summary,
                key_entities=key_entities,
                decision=decision,
                ids=ids,
            )

    def _workspace(
        self, ctx: Context, *, write: bool = False
    ) -> AbstractContextManager[Workspace]:
        return self.callers.open(ctx, write=write)
