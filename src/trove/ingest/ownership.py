"""Documents owned by an ingested file: the file is the truth, the store a copy of it.

An ingest records, in the meta table, that it owns its (namespace, source). A document of
such a source with a ``source_id`` came from a file there. Callers of a server
(:class:`~trove.workspace.Workspace`) may not edit it unless allowed (``Forbidden``,
saying to edit the file). When the library edits it anyway, the file is marked edited,
and the next ingest of the folder reads it again whatever its stat and hash say, so the
file's version is restored (and counted as updated).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trove.backends.base import Backend
    from trove.models import Document

_OWNED = "ingest.source:"
_EDITED = "ingest.edited:"


def _key(prefix: str, namespace: str, source: str) -> str:
    return prefix + json.dumps([namespace, source], ensure_ascii=False)


def claim(backend: Backend, namespace: str, source: str) -> None:
    """Record that an ingest owns this (namespace, source)."""
    key = _key(_OWNED, namespace, source)
    if backend.get_meta(key) is None:
        backend.set_meta(key, "1")


def claimed(backend: Backend, namespace: str, source: str) -> bool:
    """Whether an ingest owns this (namespace, source)."""
    return backend.get_meta(_key(_OWNED, namespace, source)) is not None


def owning_file(backend: Backend, doc: Document) -> str | None:
    """The relative path of the ingested file ``doc`` came from, else None."""
    if not doc.source or not doc.source_id:
        return None
    if not claimed(backend, doc.namespace, doc.source):
        return None
    from trove.ingest.readers import split_source_id  # the readers (parsers) load only when needed

    return split_source_id(doc.source_id)[0]


def mark_edited(backend: Backend, doc: Document) -> None:
    """After a library edit of a file's document: the next ingest re-reads that file."""
    rel = owning_file(backend, doc)
    if rel is not None:
        set_edited(backend, doc.namespace, doc.source, {rel})


def edited_files(backend: Backend, namespace: str, source: str) -> set[str]:
    """Files whose documents were edited in the store since they were last ingested."""
    return set(json.loads(backend.get_meta(_key(_EDITED, namespace, source)) or "[]"))


def set_edited(backend: Backend, namespace: str, source: str, rels: set[str]) -> None:
    """Mark these files edited (a library edit; ``trove migrate`` copies the marks)."""
    key = _key(_EDITED, namespace, source)
    with backend.transaction():
        edited = set(json.loads(backend.get_meta(key) or "[]"))
        if not rels <= edited:
            backend.set_meta(key, json.dumps(sorted(edited | rels), ensure_ascii=False))


def restored(backend: Backend, namespace: str, source: str, rels: set[str]) -> None:
    """These edited files were read again: their marks go."""
    if not rels:
        return
    key = _key(_EDITED, namespace, source)
    with backend.transaction():
        left = edited_files(backend, namespace, source) - rels
        backend.set_meta(key, json.dumps(sorted(left), ensure_ascii=False) if left else None)
