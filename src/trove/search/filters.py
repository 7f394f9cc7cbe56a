"""Search filters: validated once here, turned into SQL by each backend."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import validate
from ..errors import InvalidQuery, TroveError
from ..timeutil import TimeLike, to_epoch

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
        **unknown: Any,
    ) -> Filters:
        if unknown:
            names = ", ".join(sorted(unknown))
            raise InvalidQuery(f"unknown filter {names}; known filters: {', '.join(FILTER_NAMES)}")
        if not isinstance(namespace, str) or not namespace:
            raise InvalidQuery("namespace must be a non-empty string")
        validate.unicode(namespace, "namespace", InvalidQuery)
        if session is not None:
            validate.string(session, "session", InvalidQuery)
        scopes = _strings(scope, "scope")
        unknown_scopes = [s for s in scopes if s not in SCOPES]
        if unknown_scopes:
            raise InvalidQuery(
                f"unknown scope {unknown_scopes[0]!r}; use one of: {', '.join(SCOPES)}"
            )
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidQuery("metadata filter must be a mapping of key to value")
        for key, value in (metadata or {}).items():
            _metadata_filter(key, value)
        try:
            start = to_epoch(since, field="since")
            end = to_epoch(until, field="until")
        except TroveError as exc:
            raise InvalidQuery(str(exc)) from None
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
        )


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
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidQuery(f"metadata filter {key!r}: {value!r} is not a JSON number")
    elif not isinstance(value, int | float | bool) and value is not None:
        raise InvalidQuery(f"metadata filter {key!r}: only scalar values can be matched")
