"""The MCP reference memory server's knowledge graph (``memory.jsonl``,
modelcontextprotocol/servers ``src/memory``): one JSON object a line, either an entity
``{"type": "entity", "name", "entityType", "observations": [...]}`` or a relation
``{"type": "relation", "from", "to", "relationType"}``.

Each entity becomes a document (its name the title and key, its type the ``doc_type``,
its observations the text, one a line); each relation an edge of its type between them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trove.errors import InvalidInput
from trove.transfer.importers.reading import Imported


def read_mcp_memory(path: Path) -> Imported:
    found = Imported("mcp-memory")
    entities: dict[str, dict[str, Any]] = {}
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise InvalidInput(f"{path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deep
            raise InvalidInput(f"{path}: line {number} is not JSON") from None
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "entity" and isinstance(record.get("name"), str):
            entities[record["name"]] = record
        elif kind == "relation" and all(
            isinstance(record.get(k), str) for k in ("from", "to", "relationType")
        ):
            found.edges.append((record["from"], record["to"], record["relationType"]))
        else:
            raise InvalidInput(f"{path}: line {number} is not an entity or a relation")
    for name, entity in entities.items():
        observations = [str(o) for o in entity.get("observations") or []]
        found.items.append(
            {
                "text": "\n".join(observations) or name,
                "source_id": name,
                "doc_type": str(entity.get("entityType") or "entity"),
                "title": name,
                "metadata": {"observations": len(observations)},
            }
        )
    return found
