"""``trove mcp``: knowledge tools for agents over the Model Context Protocol (stdio or HTTP).

Each tool calls one :class:`~trove.workspace.Workspace` method under the
:class:`~.workspaces.Workspaces` and returns compact JSON. The workspace comes from the server's
configuration, never from the model: the tools have no namespace argument, and an
argument that is not in a tool's schema (``namespace``, ``author_tier``, a misspelt
filter) is refused with ``invalid_request`` (see :mod:`.mcp_schema`). Writes are stamped
``author_tier="llm"``.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime to
# build each tool's JSON schema.

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from trove.errors import MissingDependency, TroveError
from trove.interfaces import clusters as cluster_ops
from trove.interfaces.codes import error_code
from trove.interfaces.config import Rights, ServerConfig, bearer_token
from trove.interfaces.mcp_events import Subscribers, add_resources, publishing
from trove.interfaces.mcp_more import add_more_resources, add_prompts, more_tools
from trove.interfaces.mcp_schema import StrictServer, strict_tool
from trove.interfaces.workspaces import Workspaces
from trove.limits import fit
from trove.models import Document, Hit
from trove.probe import MAX_PAIRS, probe
from trove.search import budget
from trove.search.calibration import MCP_FLOOR
from trove.search.variants import MAX_VARIANTS
from trove.store import Store
from trove.workspace import Workspace

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import Field
    from starlette.datastructures import Headers
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependency(exc.name or "mcp", "mcp", "trove mcp") from None

AUTHOR_TIER = "llm"
# Items in knowledge_list are previews; knowledge_get returns the whole text.
LIST_PREVIEW_CHARS = 500
# knowledge_search's default token budget: results fill about this much of a context.
MCP_TOKENS = 2000
INSTRUCTIONS = """\
A long-term memory and knowledge base shared across conversations. Search it before \
answering questions about past decisions, preferences, people or projects \
(knowledge_search), and save what will matter later as self-contained notes \
(knowledge_write; use a dedupe_key for facts that change, so they are updated rather \
than duplicated). The workspace is fixed by the server: you see only its items, items \
of your own session, and global items."""

ItemScope = Literal["workspace", "session", "global"]
Id = Annotated[str, Field(description="An item id, as returned by the other tools.")]
Tags = Annotated[
    list[str] | None, Field(description="Labels, e.g. ['preference', 'project-apollo'].")
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(description="Extra JSON fields; knowledge_search can filter on them by equality."),
]
Importance = Annotated[
    float | None, Field(description="How much this matters, 0.0 to 1.0; returned with results.")
]
Ttl = Annotated[
    float | None,
    Field(gt=0, description="Forget the item after this many seconds (86400 = a day)."),
]

_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _changing(*, destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )


class KnowledgeTools:
    """The tools, bound to one store and configuration."""

    def __init__(self, store: Store, config: ServerConfig) -> None:
        self.guard = Workspaces(
            store, author_tier=AUTHOR_TIER, max_content_tokens=config.content_limit
        )
        self.config = config
        # Without a configured session, one per server process: over stdio that is one
        # client connection. Over HTTP each MCP session gets its own (see _session).
        self.process_session = uuid.uuid4().hex

    def knowledge_write(
        self,
        ctx: Context,
        text: Annotated[
            str,
            Field(
                description="The memory, self-contained: say who, what and when, so it "
                "makes sense when read later without this conversation."
            ),
        ],
        title: Annotated[str | None, Field(description="A short title for results.")] = None,
        tags: Tags = None,
        scope: Annotated[
            ItemScope,
            Field(
                description="workspace: every session of this workspace sees it. session: "
                "only this conversation. global: every workspace reads it (refused unless "
                "the server allows global writes)."
            ),
        ] = "workspace",
        dedupe_key: Annotated[
            str | None,
            Field(
                description="Your stable key for a fact that changes, e.g. 'user:timezone'. "
                "Writing the same key again replaces that item (same id) instead of "
                "adding a duplicate."
            ),
        ] = None,
        importance: Importance = None,
        ttl_seconds: Ttl = None,
        metadata: Metadata = None,
        source: Annotated[
            str | None, Field(description="Where it came from, e.g. 'chat', 'email', a URL.")
        ] = None,
        timestamp: Annotated[
            str | None, Field(description="When it happened, ISO-8601 (2026-11-03T09:00:00Z).")
        ] = None,
        entities: Annotated[
            list[str] | None, Field(description="People, projects, things it is about.")
        ] = None,
        confidence: Annotated[
            float | None, Field(ge=0, le=1, description="How sure you are, 0 to 1 (default 1).")
        ] = None,
        index: Annotated[
            Literal["both", "keyword", "semantic", "none"] | None,
            Field(description="Which indexes find it (default both; none: only by id)."),
        ] = None,
        keyword_text: Annotated[
            str | None, Field(description="Words to find it by, instead of its text.")
        ] = None,
        semantic_text: Annotated[
            str | None, Field(description="A sentence for its meaning, instead of its text.")
        ] = None,
        vector: Annotated[
            list[float] | None, Field(description="Your own embedding of it (store's size).")
        ] = None,
        on_conflict: Annotated[
            Literal["replace", "merge", "keep"] | None,
            Field(
                description="If the key is already stored: replace (default) the whole item, "
                "merge in only the fields given here, or keep the stored item untouched."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Save a memory (fact, decision, preference, note) so it can be found later, in this
        or future conversations. Returns its id."""
        item = _given(
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
            index=index,
            keyword_text=keyword_text,
            semantic_text=semantic_text,
            vector=vector,
        )
        with self._workspace(ctx, write=True) as ws:
            return {"id": ws.write(item), "scope": scope}

    def knowledge_search(
        self,
        ctx: Context,
        query: Annotated[
            str, Field(description="What you are looking for, in plain words (no operators).")
        ],
        limit: Annotated[int, Field(ge=1, le=50, description="How many results.")] = 10,
        tags: Annotated[
            list[str] | None, Field(description="Only items that have all of these tags.")
        ] = None,
        scope: Annotated[
            list[ItemScope] | None, Field(description="Only items of these scopes (default: all).")
        ] = None,
        source: Annotated[list[str] | None, Field(description="Only these sources.")] = None,
        author: Annotated[list[str] | None, Field(description="Only these authors.")] = None,
        doc_type: Annotated[
            list[str] | None, Field(description="Only these document types, e.g. 'email'.")
        ] = None,
        since: Annotated[
            str | None, Field(description="Only items whose timestamp is on or after (ISO-8601).")
        ] = None,
        until: Annotated[
            str | None, Field(description="Only items whose timestamp is on or before (ISO-8601).")
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="Only items whose metadata has these values.")
        ] = None,
        mode: Annotated[
            Literal["hybrid", "keyword", "semantic"] | None,
            Field(
                description="hybrid (default) matches words and meaning; keyword for exact "
                "names, ids and codes; semantic for paraphrases."
            ),
        ] = None,
        expand: Annotated[
            int,
            Field(
                ge=0,
                le=2,
                description="Also return items linked (knowledge_link) to the results, up "
                "to this many links away; they are marked with linked_from.",
            ),
        ] = 0,
        variants: Annotated[
            list[str] | None,
            Field(
                max_length=MAX_VARIANTS,
                description="Your own rewrites of the query, searched too and merged (each "
                "item once): synonyms, expanded abbreviations, key terms alone, a rephrased "
                "question, or a sentence the answer might contain. Worth it for short or "
                "vague queries and when a first search found little.",
            ),
        ] = None,
        rerank: Annotated[
            Literal["memory"] | None,
            Field(description="memory: prefer recent, important and often used items."),
        ] = None,
        cluster: Annotated[
            str | None, Field(description="Only members of this cluster (knowledge_cluster).")
        ] = None,
        entities: Annotated[
            list[str] | None, Field(description="Only items about all of these entities.")
        ] = None,
        min_importance: Annotated[
            float | None, Field(ge=0, le=1, description="Only items at least this important.")
        ] = None,
        collapse_duplicates: Annotated[
            bool, Field(description="Show each group of duplicates as its canonical item.")
        ] = True,
        vector: Annotated[
            list[float] | None,
            Field(description="Search by your own query embedding instead of the words."),
        ] = None,
        min_score: Annotated[
            float,
            Field(
                ge=0,
                le=1,
                description="Leave out results scoring below this (a score estimates the "
                f"chance a result is relevant; default {MCP_FLOOR}, 0 for everything).",
            ),
        ] = MCP_FLOOR,
        max_tokens: Annotated[
            int,
            Field(
                ge=50,
                le=50_000,
                description="Return as many results, with their text, as fit in this "
                f"many tokens (default {MCP_TOKENS}); the last one may be cut and marked "
                "truncated.",
            ),
        ] = MCP_TOKENS,
        context: Annotated[
            int, Field(ge=0, le=10, description="Also return this many chunks around each.")
        ] = 0,
    ) -> dict[str, Any]:
        """Search this workspace's knowledge by words and meaning, best first. Each result
        has an id, a score (the estimated chance it is relevant, 0 to 1), title, snippet
        («…» marks matches) and the text of its best passage with its heading; results
        below min_score (default 0.3) are left out and the text fits in max_tokens
        (default 2000). knowledge_get reads one in full. You can expand a query yourself:
        pass rephrasings in variants."""
        options = _given(
            variants=variants,
            min_score=min_score,
            max_tokens=min(max_tokens, self.config.max_result_tokens),
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
            vector=vector,
        )
        options["collapse_duplicates"] = collapse_duplicates
        with self._workspace(ctx) as ws:
            hits = ws.search(query, **options)
        # Never more than the server's result budget: whole results, best first.
        results, cut = fit([_hit(hit) for hit in hits], self.config.max_result_tokens)
        tokens = {"budget": max_tokens, "counter": budget.counter().name}
        reply: dict[str, Any] = {
            "results": results,
            "tokens": tokens,
            **getattr(hits, "meta", dict)(),
        }
        if cut:
            reply["truncated"] = f"results cut to fit {self.config.max_result_tokens} tokens"
        return reply

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

    def knowledge_get(self, ctx: Context, id: Id) -> dict[str, Any]:
        """Read one item in full: its text and where it came from."""
        with self._workspace(ctx) as ws:
            doc = ws.get(id)
        if doc is None:
            raise ToolError(f"not_found: no item with id {id!r} (it may be deleted or expired)")
        return _document(doc)

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
    ) -> dict[str, Any]:
        """Change an item's text, title, tags, metadata, importance or lifetime; its id and
        origin stay. Scope and dedupe_key cannot change: write a new item for that."""
        changes = _given(
            text=text,
            title=title,
            tags=tags,
            metadata=metadata,
            importance=importance,
            ttl=ttl_seconds,
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
    ) -> dict[str, Any]:
        """Browse items newest first, a page at a time. Pass the returned cursor back for the
        next page; a null cursor means there are no more. Texts are previews: use
        knowledge_get for the whole text. Expired items are listed with expired=true."""
        with self._workspace(ctx) as ws:
            page = ws.list(
                scope=scope, cursor=cursor, limit=limit, include_deleted=include_deleted
            )
        return {"items": [_preview(doc) for doc in page.items], "cursor": page.cursor}

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

    @contextmanager
    def _workspace(self, ctx: Context, *, write: bool = False) -> Iterator[Workspace]:
        headers = ctx.headers
        rights: Rights | None = self.config.rights
        session = self.process_session
        if headers is not None:  # HTTP; over stdio the caller is whoever started trove
            rights = self.config.authenticate(bearer_token(headers.get("authorization")))
            session = headers.get("mcp-session-id") or session
        if rights is None:  # RequireToken refuses these before they get here
            raise ToolError("unauthorized: a valid bearer token is required")
        enter = self.guard.write if write else self.guard.read
        try:
            with enter(rights, session) as ws:
                yield ws
        except TroveError as exc:
            # ToolError: the model sees the message (other errors reach it as a bare
            # "Error executing tool"), with a code it can act on.
            raise ToolError(f"{error_code(exc)[1]}: {exc}") from exc


def create_server(store: Store, config: ServerConfig) -> MCPServer:
    """An MCP server with the knowledge tools the configuration allows.

    Tools the configuration denies are not offered at all (the library would refuse them
    anyway), so a model does not plan around tools it cannot use.
    """
    tools = KnowledgeTools(store, config)
    rights = config.rights
    offered: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (tools.knowledge_search, "Search knowledge", _READ),
        (tools.knowledge_get, "Read an item", _READ),
        (tools.knowledge_list, "List items", _READ),
        (tools.knowledge_probe, "Probe recall", _READ),
    ]
    if rights.allow_write:
        offered.append((tools.knowledge_cluster, "Clusters of items", _changing(destructive=True)))
    if rights.allow_write:
        offered += [
            (tools.knowledge_write, "Save a memory", _changing(destructive=True)),
            (tools.knowledge_update, "Update an item", _changing(destructive=True)),
            (tools.knowledge_link, "Link two items", _changing(destructive=False)),
        ]
    if rights.allow_delete:
        offered.append((tools.knowledge_delete, "Delete an item", _changing(destructive=True)))
    offered += more_tools(tools, config)
    subscribers = Subscribers()
    server = StrictServer(
        name="trove",
        instructions=INSTRUCTIONS,
        tools=[strict_tool(fn, title, annotations) for fn, title, annotations in offered],
        subscriptions=subscribers.bus,
        lifespan=publishing(store, config, subscribers),
    )
    subscribers.install(server)
    add_resources(server, tools.guard, config)
    add_more_resources(server, tools.guard, config)
    add_prompts(server, tools.guard, config)
    return server


def run_stdio(store: Store, config: ServerConfig) -> None:
    create_server(store, config).run("stdio")


def run_http(store: Store, config: ServerConfig, *, log_level: str = "info") -> None:
    """Streamable HTTP at ``/mcp``, with the same bind and token rules as ``trove serve``."""
    import uvicorn

    config.check_bind(config.host)
    app = create_server(store, config).streamable_http_app(
        host=config.host, max_request_body_size=config.max_body_bytes
    )
    uvicorn.run(RequireToken(app, config), host=config.host, port=config.port, log_level=log_level)


class RequireToken:
    """Refuse HTTP requests without a valid bearer token when tokens are configured."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            authorization = Headers(scope=scope).get("authorization")
            if self.config.authenticate(bearer_token(authorization)) is None:
                error = {"code": "unauthorized", "message": "a valid bearer token is required"}
                headers = {"WWW-Authenticate": "Bearer"}
                await JSONResponse({"error": error}, 401, headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)


# --- formatting: compact JSON for a model's context --------------------------------------


def _given(**values: Any) -> dict[str, Any]:
    """The arguments the model gave (None: left out, so the library's default applies)."""
    return {k: v for k, v in values.items() if v is not None}


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in ("", None, [], {}, ())}


def _hit(hit: Hit) -> dict[str, Any]:
    data = hit.to_dict()
    del data["doc_id"], data["chunk"]  # character offsets mean nothing to a model
    if hit.chunk.heading:
        data["heading"] = hit.chunk.heading
    data["score"] = round(hit.score, 4)
    return {"id": hit.doc_id, **_compact(data)}


def _document(doc: Document) -> dict[str, Any]:
    data = doc.to_dict()
    for internal in ("content_hash", "session_id", "deleted", "expired"):
        data.pop(internal)
    return _compact(data)


def _preview(doc: Document) -> dict[str, Any]:
    data = _document(doc)
    if len(doc.text) > LIST_PREVIEW_CHARS:
        data["text"] = doc.text[:LIST_PREVIEW_CHARS]
        data["text_truncated"] = True
    data.update({k: True for k in ("expired", "deleted") if getattr(doc, k)})
    return data
