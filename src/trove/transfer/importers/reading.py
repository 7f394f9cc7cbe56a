"""What every importer reads into (:class:`Imported`), and the helpers they share for
reading an export: its JSON, and a message's text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trove.errors import InvalidInput


@dataclass
class Imported:
    """What an importer read: documents (dicts of :meth:`Store.add` arguments, each with
    a ``source_id``) and edges between them as ``(src source_id, dst source_id, type)``."""

    source: str
    items: list[dict[str, Any]] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    conversations: int = 0


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not readable JSON: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{path}: JSON nested too deeply to read") from None


def texts(parts: Iterable[Any]) -> str:
    """The text of a message's parts (images and other objects carry none)."""
    return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
