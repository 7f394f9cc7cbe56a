"""MCP tools for originals and memory upkeep, with the same workspace rules as the core
tools: ``knowledge_original`` (read an item's kept original), ``knowledge_attach_original``
(keep one), ``knowledge_canonicalize`` (fold near-duplicates) and ``knowledge_clear``
(empty the workspace).

Bytes travel as base64 in JSON; one original over :data:`MAX_ORIGINAL_BYTES` is refused
here (``trove get --original`` or ``GET /v1/items/{id}/original`` stream any size).
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

import base64
import binascii
import contextlib
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp.params import Id
from trove.interfaces.mcp.schema import READ_ONLY, changing

# What one tool result carries: a model's context is no place for larger files.
MAX_ORIGINAL_BYTES = 8 << 20
_MAX_BASE64 = (MAX_ORIGINAL_BYTES + 2) // 3 * 4


class UpkeepTools:
    """Tools bound to the same workspace rules as :class:`~.tools.KnowledgeTools`."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools  # KnowledgeTools: its _workspace

    def knowledge_original(self, ctx: Context, id: Id) -> dict[str, Any]:
        """Read the file an item was made from (kept with --keep-originals or attached):
        its name, media type, size and bytes as base64 (and as text when it is text)."""
        with self.tools._workspace(ctx) as ws:
            info = ws.original_info(id)
            if info.size > MAX_ORIGINAL_BYTES:
                raise ToolError(
                    f"content_too_large: the original is {info.size} bytes; this tool "
                    f"returns at most {MAX_ORIGINAL_BYTES} (read it with trove get "
                    "--original or GET /v1/items/{id}/original)"
                )
            data = b"".join(ws.original_pieces(id))
        reply = {"id": id, "name": info.name, "media_type": info.media_type, "size": info.size}
        reply["data_base64"] = base64.b64encode(data).decode("ascii")
        if info.media_type.startswith("text/"):
            with contextlib.suppress(UnicodeDecodeError):
                reply["text"] = data.decode("utf-8")
        return reply

    def knowledge_attach_original(
        self,
        ctx: Context,
        id: Id,
        data_base64: Annotated[
            str, Field(max_length=_MAX_BASE64, description="The file's bytes, base64.")
        ],
        name: Annotated[str, Field(description="Its file name, e.g. 'notes.pdf'.")] = "",
        media_type: Annotated[
            str, Field(description="Its media type (default: guessed from the name).")
        ] = "",
    ) -> dict[str, Any]:
        """Keep a file as an item's original (replacing the one it had), e.g. the PDF a
        summary was made from; knowledge_original reads it back."""
        try:
            data = base64.b64decode(data_base64, validate=True)
        except (binascii.Error, ValueError):
            raise ToolError("invalid_request: data_base64: not base64") from None
        with self.tools._workspace(ctx, write=True) as ws:
            info = ws.attach_original(id, data, name, media_type)
        return {"id": id, "name": info.name, "media_type": info.media_type, "size": info.size}

    def knowledge_canonicalize(
        self,
        ctx: Context,
        threshold: Annotated[
            float, Field(gt=0, le=1, description="Least cosine of two memories' vectors.")
        ] = 0.95,
        text_threshold: Annotated[
            float | None,
            Field(gt=0, le=1, description="Least word overlap too (null: vectors only)."),
        ] = 0.5,
        rule: Annotated[
            Literal["newest", "accessed", "important"],
            Field(description="Which member of a group is kept as canonical."),
        ] = "newest",
        dry_run: Annotated[bool, Field(description="Only report the groups.")] = False,
    ) -> dict[str, Any]:
        """Find near-duplicate memories and fold each group into one canonical memory
        (reversible, nothing deleted): knowledge_search then shows each group once."""
        options = {"threshold": threshold, "text_threshold": text_threshold, "rule": rule}
        with self.tools._workspace(ctx, write=not dry_run) as ws:
            groups = ws.canonicalize(dry_run=dry_run, **options)
        return {"groups": [g.to_dict() for g in groups], "dry_run": dry_run}

    def knowledge_clear(
        self,
        ctx: Context,
        confirm: Annotated[bool, Field(description="Must be true: every item goes, for good.")],
    ) -> dict[str, Any]:
        """Remove for good every memory of this workspace you may delete (this session's
        too; another session's stay). No restore. Returns how many."""
        if not confirm:
            raise ToolError("invalid_request: confirm: must be true to clear the workspace")
        with self.tools._workspace(ctx, write=True) as ws:
            return {"removed": ws.clear()}


def upkeep_tools(tools: Any, config: ServerConfig) -> list[tuple[Callable[..., Any], str, Any]]:
    """The upkeep tools the configuration allows, as (function, title, annotations)."""
    more = UpkeepTools(tools)
    offered: list[tuple[Callable[..., Any], str, Any]] = [
        (more.knowledge_original, "Read an item's original", READ_ONLY),
    ]
    if config.rights.allow_write:
        attach = (more.knowledge_attach_original, "Keep an original", changing(destructive=True))
        fold = (more.knowledge_canonicalize, "Fold duplicates", changing(destructive=False))
        offered += [attach, fold]
    if config.rights.allow_delete:
        offered.append((more.knowledge_clear, "Clear the workspace", changing(destructive=True)))
    return offered
