"""Checks of values that cross the library's boundary, in one place for every interface.

The write path and the search filters call these, so the CLI, HTTP, MCP and the library
refuse the same inputs with the same messages: each names the field and says what it
takes. (A value that slipped through used to surface as a TypeError, a RecursionError, an
``apsw.SQLError`` or a UnicodeEncodeError, and over HTTP as a 500.)
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Mapping
from typing import Any

from trove.errors import InvalidInput, TroveError

# Search results and pages: more than this is a scan, not a search.
MAX_LIMIT = 1000
# Graph expansion: edges away from the hits.
MAX_EXPAND = 5
# Metadata is a small JSON object; deeper nesting is refused (it broke json and SQLite).
MAX_METADATA_DEPTH = 32
# An edge's weight multiplies the score of what it reaches, so it is a share: 0.0 to 1.0.
WEIGHT_RANGE = (0.0, 1.0)
IMPORTANCE_RANGE = (0.0, 1.0)
# What SQLite stores as an integer (a larger one overflows when bound to a statement).
INT64_RANGE = (-(2**63), 2**63 - 1)


def _shown(value: Any) -> str:
    """A short repr for a message (a 5,000-deep dict has no full one)."""
    return reprlib.repr(value)


def unicode(value: str, name: str, error: type[TroveError] = InvalidInput) -> str:
    """``value`` if it encodes as UTF-8 (no lone surrogates, which no file can store)."""
    if value.isascii():  # no surrogates, and no copy of a large text to find out
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{name} contains lone surrogates; it is not valid Unicode") from None
    return value


def text(value: Any, name: str = "text", *, titled: bool = False) -> str:
    """A document's text: a string with something in it besides white space, or, for a
    ``titled`` document (a title-only record, common in public corpora), any string."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
    if not titled and (not value or value.isspace()):  # (strip() would copy a large text)
        raise InvalidInput(f"{name} must not be empty or only white space without a title")
    return unicode(value, name)


def key_part(value: str, name: str) -> str:
    """A part of a document's natural key (namespace, source, source_id, dedupe key,
    session): no NUL, which joins the parts when the id is made, so a NUL inside one made
    two keys one id (``a`` + ``b\\0c`` and ``a\\0b`` + ``c``), across namespaces too."""
    if "\x00" in value:
        raise InvalidInput(f"{name} must not contain a NUL character")
    return value


def string(value: Any, name: str, error: type[TroveError] = InvalidInput) -> str:
    if not isinstance(value, str):
        raise error(f"{name} must be a string, not {type(value).__name__}")
    return unicode(value, name, error)


def number(
    value: Any, name: str, low: float, high: float, error: type[TroveError] = InvalidInput
) -> float:
    """A finite number within [low, high] (True and False are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{name} must be a number from {low:g} to {high:g}, not {_shown(value)}")
    # An int is finite however large (math.isfinite(10**400) overflows converting it).
    if not ((isinstance(value, int) or math.isfinite(value)) and low <= value <= high):
        raise error(f"{name} must be a number from {low:g} to {high:g}, not {_shown(value)}")
    return float(value)


def count(value: Any, name: str, low: int, high: int, error: type[TroveError]) -> int:
    """An integer within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise error(f"{name} must be an integer from {low} to {high}, not {_shown(value)}")
    return value


def int64(value: int, name: str, error: type[TroveError] = InvalidInput) -> int:
    """``value`` if SQLite can store it as an integer (both backends refuse the same)."""
    low, high = INT64_RANGE
    if not low <= value <= high:
        raise error(f"{name} must be an integer from -2**63 to 2**63-1, not {_shown(value)}")
    return value


def metadata(value: Any, name: str = "metadata") -> dict[str, Any]:
    """A JSON object with string keys (no NUL), finite numbers, nested at most
    ``MAX_METADATA_DEPTH`` deep."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{name} must be a mapping of string keys to JSON values")
    _json(value, name, 1)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be JSON-serializable: {exc}") from None
    return dict(value)


def _json(value: Any, path: str, depth: int) -> None:
    if depth > MAX_METADATA_DEPTH:
        raise InvalidInput(f"{path}: nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{path}: keys must be strings, not {type(key).__name__}")
            if "\x00" in key:
                raise InvalidInput(f"{path}: a key contains a NUL character")
            unicode(key, f"{path} key")
            _json(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _json(item, f"{path}[{i}]", depth + 1)
    elif isinstance(value, str):
        unicode(value, path)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{path}: {_shown(value)} is not a JSON number")
    elif value is not None and not isinstance(value, bool | int | float):
        raise InvalidInput(f"{path}: {type(value).__name__} is not a JSON value")
