"""Importers for the exports people already have: ChatGPT, Claude, the MCP memory server,
Slack. Each reads its format into the documents (and edges) it holds and writes them
through :meth:`Store.write_many`, keyed by ids from the export, so importing a newer
export again adds what is new, updates what changed and leaves the rest alone.

Chats become one document per message (``doc_type`` ``chat``): the author or role, the
message's time, the conversation as the thread (``thread_id``), its title, and the
conversation's participants, so a search hit names who said what and when, and
``thread_id`` gathers the conversation back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trove.errors import InvalidInput
from trove.transfer.importers.reading import Imported, load_json

if TYPE_CHECKING:
    from trove.store import Store

# Every ZIP archive starts so (a local file header); exports often come zipped.
_ZIP = b"PK\x03\x04"
# How much of a file's first line tells its format (an export's header is short).
_HEAD_BYTES = 1 << 20


@dataclass
class ImportReport:
    conversations: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    restored: int = 0
    edges: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def _readers() -> dict[str, Callable[[Path], Imported]]:
    from trove.transfer.importers.chatgpt import read_chatgpt
    from trove.transfer.importers.claude import read_claude
    from trove.transfer.importers.mcp_memory import read_mcp_memory
    from trove.transfer.importers.slack import read_slack

    return {
        "chatgpt": read_chatgpt,
        "claude": read_claude,
        "mcp-memory": read_mcp_memory,
        "slack": read_slack,
    }


def run_importer(
    store: Store, kind: str, path: str | Path, *, namespace: str = "default"
) -> ImportReport:
    """Read ``path`` as ``kind`` and write what it holds into ``store``."""
    readers = _readers()
    if kind not in readers:
        raise InvalidInput(f"unknown import format {kind!r}; use one of: {', '.join(readers)}")
    try:
        found = readers[kind](Path(path))
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        # A file of the right kind with a value of the wrong shape somewhere inside (or
        # nested deeper than Python follows).
        raise InvalidInput(
            f"{path}: not a valid {kind} export ({type(exc).__name__}: {exc})"
        ) from None
    return write(store, found, namespace=namespace)


def write(store: Store, found: Imported, *, namespace: str = "default") -> ImportReport:
    report = ImportReport(conversations=found.conversations)
    items = [{**item, "source": found.source, "namespace": namespace} for item in found.items]
    ids: dict[str, str] = {}
    for item, result in zip(items, store.write_many(items), strict=True):
        ids[str(item["source_id"])] = result.id
        setattr(report, result.action, getattr(report, result.action) + 1)
    report.edges = _sync_edges(store, found, ids)
    return report


def _sync_edges(store: Store, found: Imported, ids: dict[str, str]) -> int:
    """Make the edges between the imported documents what the export says (an export is
    the truth about its own graph: a relation it no longer has is unlinked)."""
    wanted: dict[str, set[tuple[str, str]]] = {}
    for src, dst, kind in found.edges:
        if src in ids and dst in ids and ids[src] != ids[dst]:
            wanted.setdefault(ids[src], set()).add((ids[dst], kind))
    members = set(ids.values())
    mine = sorted(members)
    have: dict[str, set[tuple[str, str]]] = {}
    for start in range(0, len(mine), 500):
        for e in store.backend.edges_of(mine[start : start + 500], None):
            if e.src in members and e.dst in members:
                have.setdefault(e.src, set()).add((e.dst, e.type))
    added = 0
    for doc_id in mine:
        want = wanted.get(doc_id, set())
        for dst, kind in have.get(doc_id, set()) - want:
            store.unlink(doc_id, dst, kind)
        for dst, kind in sorted(want - have.get(doc_id, set())):
            store.link(doc_id, dst, kind)
            added += 1
    return added


def detect(path: Path) -> str:
    """Which format ``path`` is in, from its shape."""
    if path.is_dir():
        if (path / "channels.json").is_file() or (path / "users.json").is_file():
            return "slack"
        raise InvalidInput(f"{path} is a folder but not a Slack export (no channels.json)")
    with path.open("rb") as stream:
        first = stream.readline(_HEAD_BYTES)
    if first.startswith(_ZIP):
        raise InvalidInput(
            f"{path} is a ZIP archive: unzip it and import the folder (Slack) or the "
            "conversations.json inside"
        )
    try:
        head = json.loads(first.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep
        head = None
    if isinstance(head, dict):
        if head.get("format") == "trove-export":
            return "trove"
        if head.get("type") in ("entity", "relation"):
            return "mcp-memory"
    data = load_json(path)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "mapping" in data[0]:
            return "chatgpt"
        if "chat_messages" in data[0]:
            return "claude"
    raise InvalidInput(f"cannot tell what {path} is; name it with --from")
