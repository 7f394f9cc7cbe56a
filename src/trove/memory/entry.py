"""Entry control and memory fields of one write (issue 16).

An entry's ``index`` says which indexes hold it: ``True`` (both, the default), ``False``
(neither: kept, gettable, listable, filterable, but never found by a query),
``"keyword"`` or ``"semantic"``; an entry that is never indexed may have no text (a
payload of metadata). ``keyword_text`` / ``semantic_text`` are what the
keyword index and the embedder see instead of the stored text; :meth:`Store.get` still
returns the stored text byte-exact.

An entry with any of these set is indexed as one span covering its whole text (entries
that need them are memory-sized): the span's keyword text is ``keyword_text`` (or the
text, or nothing when the keyword index leaves it out), and its vector is made from
``semantic_text`` (or the text), or not made at all when the semantic index leaves it out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from trove.backends.writes import ChunkRow
from trove.errors import InvalidInput
from trove.models import Chunk, Document

FIELDS = frozenset(
    {
        "confidence",
        "compression_level",
        "entities",
        "source_turn_ids",
        "index",
        "keyword_text",
        "semantic_text",
    }
)
INDEXED = ("both", "keyword", "semantic", "none")
_INDEX_VALUES = {True: "both", False: "none", "both": "both", "none": "none"}
_INDEX_VALUES.update({"keyword": "keyword", "semantic": "semantic"})


def fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """The memory fields of one item, validated, as Document fields."""
    return {
        "confidence": _unit(item.get("confidence"), "confidence", 1.0),
        "compression_level": _level(item.get("compression_level")),
        "entities": _strings(item.get("entities"), "entities"),
        "source_turn_ids": _strings(item.get("source_turn_ids"), "source_turn_ids"),
        "indexed": index_mode(item.get("index", True)),
        "keyword_text": _text(item.get("keyword_text"), "keyword_text"),
        "semantic_text": _text(item.get("semantic_text"), "semantic_text"),
    }


def index_mode(value: Any) -> str:
    """``index=`` as stored: both, keyword, semantic or none."""
    if value is None:
        return "both"
    if isinstance(value, bool | str) and value in _INDEX_VALUES:
        return _INDEX_VALUES[value]
    raise InvalidInput(f"index must be true, false, 'keyword' or 'semantic', not {value!r}")


def payload_only(item: Mapping[str, Any]) -> bool:
    """Whether an item is never indexed (``index`` false or ``"none"``): its text may then
    be empty or left out, a record of metadata kept for get, list and filters."""
    return item.get("index") in (False, "none")


def controlled(doc: Document) -> bool:
    return doc.indexed != "both" or doc.keyword_text is not None or doc.semantic_text is not None


def rows(doc: Document) -> list[ChunkRow]:
    """The one span an entry under entry control is indexed as."""
    keyword = doc.indexed in ("both", "keyword")
    semantic_text = doc.semantic_text if doc.semantic_text is not None else doc.text
    embed = f"{doc.title}\n\n{semantic_text}" if doc.title else semantic_text
    # The hash names what the vector is made of, so equal texts share one vector.
    digest = hashlib.sha256(f"{doc.title}\x00{semantic_text}".encode()).hexdigest()
    text = (doc.keyword_text if doc.keyword_text is not None else doc.text) if keyword else ""
    return [
        ChunkRow(
            chunk=Chunk(index=0, start=0, end=len(doc.text)),
            head=doc.title if keyword else "",
            text=text,
            text_hash=digest,
            embed=embed,
        )
    ]


def semantic(doc: Document) -> bool:
    """Whether the entry gets a vector."""
    return doc.indexed in ("both", "semantic")


def _unit(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"{name} must be a number from 0 to 1, not {value!r}")
    return float(value)


def _level(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"compression_level must be a non-negative integer, not {value!r}")
    return value


def _strings(value: Any, name: str) -> tuple[str, ...]:
    values = (value,) if isinstance(value, str) else tuple(value or ())
    if not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{name} must be a list of strings")
    return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))


def _text(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
