"""Search filters: validated once here, turned into SQL by each backend."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trove import validate
from trove.errors import InvalidQuery, TroveError
from trove.timeutil import TimeLike, to_epoch

SCOPES = ("workspace", "session", "global")
FILTER_NAMES = (
    "namespace",
    "scope",
    "source",
    "doc_type",
    "author",
    "tags",
    "since",
    "until",
    "metadata",
    "entities",
    "min_importance",
    "min_confidence",
    "max_compression",
    "cluster",
)


@dataclass(frozen=True)
class Filters:
    """What a hit must satisfy. Tuples mean "any of"; ``tags`` means "all of"."""

    namespace: str = "default"
    scope: tuple[str, ...] = ()
    session: str | None = None
    source: tuple[str, ...] = ()
    doc_type: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    metadata: tuple[tuple[str, Any], ...] = field(default=())
    # Agent memory (issue 16): entities like tags (all of), and bounds.
    entities: tuple[str, ...] = ()
    min_importance: float | None = None
    min_confidence: float | None = None
    max_compression: int | None = None
    # Hide duplicates whose canonical document is live (set by the store, see canonical).
    collapse: bool = False
    cluster: str | None = None

    @classmethod
    def build(
        cls,
        *,
        namespace: str = "default",
        scope: str | Iterable[str] | None = None,
        session: str | None = None,
        source: str | Iterable[str] | None = None,
        doc_type: str | Iterable[str] | None = None,
        author: str | Iterable[str] | None = None,
        tags: str | Iterable[str] | None = None,
        since: TimeLike | None = None,
        until: TimeLike | None = None,
        metadata: Mapping[str, Any] | None = None,
        entities: str | Iterable[str] | None = None,
        min_importance: float | None = None,
        min_confidence: float | None = None,
        max_compression: int | None = None,
        collapse: bool = False,
        cluster: str | None = None,
        **unknown: Any,
    ) -> Filters:
        if unknown:
            names = ", ".join(sorted(unknown))
            raise InvalidQuery(f"unknown filter {names}; known filters: {', '.join(FILTER_NAMES)}")
        _check_reader(namespace, session)
        scopes = _scopes(scope)
        _check_metadata(metadata)
        start, end = _bounds(since, until)
        return cls(
            namespace=namespace,
            scope=scopes,
            session=session,
            source=_strings(source, "source"),
            doc_type=_strings(doc_type, "doc_type"),
            author=_strings(author, "author"),
            tags=_strings(tags, "tags"),
            since=start,
            until=end,
            metadata=tuple(sorted((metadata or {}).items())),
            entities=_strings(entities, "entities"),
            min_importance=_number(min_importance, "min_importance"),
            min_confidence=_number(min_confidence, "min_confidence"),
            max_compression=_whole(max_compression, "max_compression"),
            collapse=bool(collapse),
            cluster=_cluster(cluster),
        )


def _check_reader(namespace: Any, session: Any) -> None:
    if not isinstance(namespace, str) or not namespace:
        raise InvalidQuery("namespace must be a non-empty string")
    validate.unicode(namespace, "namespace", InvalidQuery)
    if session is not None:
        validate.string(session, "session", InvalidQuery)


def _scopes(scope: Any) -> tuple[str, ...]:
    scopes = _strings(scope, "scope")
    unknown_scopes = [s for s in scopes if s not in SCOPES]
    if unknown_scopes:
        raise InvalidQuery(f"unknown scope {unknown_scopes[0]!r}; use one of: {', '.join(SCOPES)}")
    return scopes


def _check_metadata(metadata: Any) -> None:
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidQuery("metadata filter must be a mapping of key to value")
    for key, value in (metadata or {}).items():
        _metadata_filter(key, value)


def _bounds(since: Any, until: Any) -> tuple[float | None, float | None]:
    try:
        return to_epoch(since, field="since"), to_epoch(until, field="until")
    except TroveError as exc:
        raise InvalidQuery(str(exc)) from None


def _cluster(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidQuery("cluster must be a cluster id (a string)")
    return value


def _number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidQuery(f"{name} must be a number")
    try:
        return float(value)
    except OverflowError:  # an int past a float's range (10**400)
        raise InvalidQuery(f"{name} must be a number, not an integer of that size") from None


def _whole(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidQuery(f"{name} must be an integer")
    return validate.int64(value, name, InvalidQuery)


def _strings(value: str | Iterable[str] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, str | list | tuple | set | frozenset):
        raise InvalidQuery(f"{name} filter must be a string or a list of strings")
    items = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(item, str) for item in items):
        raise InvalidQuery(f"{name} filter must be a string or a list of strings")
    for item in items:
        validate.unicode(item, f"{name} filter", InvalidQuery)
    return items


def _metadata_filter(key: Any, value: Any) -> None:
    if not isinstance(key, str) or "\x00" in key:
        raise InvalidQuery("metadata filter keys must be strings without NUL characters")
    validate.unicode(key, "metadata filter key", InvalidQuery)
    if isinstance(value, str):
        validate.unicode(value, f"metadata filter {key!r}", InvalidQuery)
    elif isinstance(value, int) and not isinstance(value, bool):
        validate.int64(value, f"metadata filter {key!r}", InvalidQuery)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidQuery(f"metadata filter {key!r}: {value!r} is not a JSON number")
    elif not isinstance(value, int | float | bool) and value is not None:
        raise InvalidQuery(f"metadata filter {key!r}: only scalar values can be matched")
