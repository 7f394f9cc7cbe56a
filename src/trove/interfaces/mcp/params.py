"""The MCP tools' parameter types: each ``Annotated`` type carries the description and
bounds a model sees in the tool's JSON schema."""

# No `from __future__ import annotations`: the SDK reads these types at runtime.

from typing import Annotated, Any, Literal

from pydantic import Field

from trove.interfaces.mcp.format import MCP_TOKENS
from trove.search.calibration import MCP_FLOOR
from trove.search.variants import MAX_VARIANTS

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

# knowledge_write
Memory = Annotated[
    str,
    Field(
        description="The memory, self-contained: say who, what and when, so it "
        "makes sense when read later without this conversation."
    ),
]
Title = Annotated[str | None, Field(description="A short title for results.")]
WriteScope = Annotated[
    ItemScope,
    Field(
        description="workspace: every session of this workspace sees it. session: "
        "only this conversation. global: every workspace reads it (refused unless "
        "the server allows global writes)."
    ),
]
DedupeKey = Annotated[
    str | None,
    Field(
        description="Your stable key for a fact that changes, e.g. 'user:timezone'. "
        "Writing the same key again replaces that item (same id) instead of "
        "adding a duplicate."
    ),
]
Source = Annotated[
    str | None, Field(description="Where it came from, e.g. 'chat', 'email', a URL.")
]
Timestamp = Annotated[
    str | None, Field(description="When it happened, ISO-8601 (2026-11-03T09:00:00Z).")
]
Entities = Annotated[list[str] | None, Field(description="People, projects, things it is about.")]
Confidence = Annotated[
    float | None, Field(ge=0, le=1, description="How sure you are, 0 to 1 (default 1).")
]
Compression = Annotated[
    int | None,
    Field(
        ge=0,
        description="How summarised it is: 0 (default) as said; 1 and up once you have "
        "folded it into a summary (link the summary to it with derived_from).",
    ),
]
MaxCompression = Annotated[
    int | None,
    Field(ge=0, description="Only items at most this summarised (0: not summarised yet)."),
]
Index = Annotated[
    Literal["both", "keyword", "semantic", "none"] | None,
    Field(description="Which indexes find it (default both; none: only by id)."),
]
KeywordText = Annotated[str | None, Field(description="Words to find it by, instead of its text.")]
SemanticText = Annotated[
    str | None, Field(description="A sentence for its meaning, instead of its text.")
]
OwnVector = Annotated[
    list[float] | None, Field(description="Your own embedding of it (store's size).")
]
GivenChunks = Annotated[
    list[list[int | str]] | None,
    Field(
        description="Your own chunk boundaries, to be found by: [start, end] or [start, "
        "end, heading] in characters of text, in order, covering all but blank space."
    ),
]
OnConflict = Annotated[
    Literal["replace", "merge", "keep"] | None,
    Field(
        description="If the key is already stored: replace (default) the whole item, "
        "merge in only the fields given here, or keep the stored item untouched."
    ),
]

# knowledge_search
Query = Annotated[
    str, Field(description="What you are looking for, in plain words (no operators).")
]
Limit = Annotated[int, Field(ge=1, le=50, description="How many results.")]
HasTags = Annotated[list[str] | None, Field(description="Only items that have all of these tags.")]
Scopes = Annotated[
    list[ItemScope] | None, Field(description="Only items of these scopes (default: all).")
]
Sources = Annotated[list[str] | None, Field(description="Only these sources.")]
Authors = Annotated[list[str] | None, Field(description="Only these authors.")]
DocTypes = Annotated[
    list[str] | None, Field(description="Only these document types, e.g. 'email'.")
]
Since = Annotated[
    str | None, Field(description="Only items whose timestamp is on or after (ISO-8601).")
]
Until = Annotated[
    str | None, Field(description="Only items whose timestamp is on or before (ISO-8601).")
]
MetadataEquals = Annotated[
    dict[str, Any] | None, Field(description="Only items whose metadata has these values.")
]
Mode = Annotated[
    Literal["hybrid", "keyword", "semantic"] | None,
    Field(
        description="hybrid (default) matches words and meaning; keyword for exact "
        "names, ids and codes; semantic for paraphrases."
    ),
]
Expand = Annotated[
    Annotated[int, Field(ge=0, le=2)] | Literal["llm"] | None,
    Field(
        description="1 or 2: also return items linked (knowledge_link) to the results, up "
        'to this many links away, marked with linked_from. "llm": have the store\'s '
        "configured model rephrase the query too. 0: neither. Left out: the store's "
        "setting (trove settings expand=llm).",
    ),
]
Variants = Annotated[
    list[str] | None,
    Field(
        max_length=MAX_VARIANTS,
        description="Your own rewrites of the query, searched too and merged (each "
        "item once): synonyms, expanded abbreviations, key terms alone, a rephrased "
        "question, or a sentence the answer might contain. Worth it for short or "
        "vague queries and when a first search found little.",
    ),
]
Rerank = Annotated[
    Literal["memory"] | None,
    Field(description="memory: prefer recent, important and often used items."),
]
InCluster = Annotated[
    str | None, Field(description="Only members of this cluster (knowledge_cluster).")
]
AboutEntities = Annotated[
    list[str] | None, Field(description="Only items about all of these entities.")
]
MinImportance = Annotated[
    float | None, Field(ge=0, le=1, description="Only items at least this important.")
]
MinConfidence = Annotated[
    float | None, Field(ge=0, le=1, description="Only items held with at least this confidence.")
]
CollapseDuplicates = Annotated[
    bool, Field(description="Show each group of duplicates as its canonical item.")
]
QueryVector = Annotated[
    list[float] | None,
    Field(description="Search by your own query embedding instead of the words."),
]
MinScore = Annotated[
    float,
    Field(
        ge=0,
        le=1,
        description="Leave out results scoring below this (a score estimates the "
        f"chance a result is relevant; default {MCP_FLOOR}, 0 for everything).",
    ),
]
MaxTokens = Annotated[
    int,
    Field(
        ge=50,
        le=50_000,
        description="Return as many results, with their text, as fit in this "
        f"many tokens (default {MCP_TOKENS}); the last one may be cut and marked "
        "truncated.",
    ),
]
Around = Annotated[
    int, Field(ge=0, le=10, description="Also return this many chunks around each.")
]
