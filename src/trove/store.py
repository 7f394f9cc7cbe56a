"""Store: the public API. Id rules, chunking and search fusion live here, once, above a
backend that only keeps rows and answers index queries."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .backends.base import Backend, ChunkRow
from .errors import InvalidInput, InvalidQuery, NotFound
from .ids import document_id
from .ingest.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP, chunk_text
from .ingest.walk import IngestReport
from .models import Document, Hit, Stats
from .search.filters import Filters
from .search.query import parse
from .timeutil import TimeLike, now, to_epoch, to_iso

MODES = ("keyword",)
_ADD_FIELDS = frozenset(
    [
        "text",
        "source",
        "source_id",
        "doc_type",
        "title",
        "author",
        "participants",
        "timestamp",
        "url",
        "thread_id",
        "channel",
        "tags",
        "metadata",
        "namespace",
        "dedupe_key",
        "expires_at",
    ]
)
# Fields whose change alters what is indexed, so chunks are rebuilt.
_INDEXED = ("content_hash", "title")
_COMPARED = [
    "namespace",
    "scope",
    "source",
    "source_id",
    "dedupe_key",
    "doc_type",
    "title",
    "author",
    "participants",
    "timestamp",
    "url",
    "thread_id",
    "channel",
    "tags",
    "metadata",
    "content_hash",
    "importance",
    "author_tier",
    "expires_at",
]


@dataclass(frozen=True)
class WriteResult:
    """What one write did: ``added``, ``updated``, ``unchanged`` or ``restored``."""

    id: str
    action: str


class Store:
    """A knowledge store. Open one with :func:`trove.open`."""

    def __init__(
        self,
        backend: Backend,
        *,
        chunk_chars: int = DEFAULT_MAX_CHARS,
        chunk_overlap: int = DEFAULT_OVERLAP,
    ) -> None:
        self.backend = backend
        self.chunk_chars = chunk_chars
        self.chunk_overlap = chunk_overlap

    # --- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ----------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        source: str = "",
        source_id: str | None = None,
        doc_type: str = "",
        title: str = "",
        author: str = "",
        participants: Iterable[str] = (),
        timestamp: TimeLike | None = None,
        url: str = "",
        thread_id: str = "",
        channel: str = "",
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        namespace: str = "default",
        dedupe_key: str | None = None,
        expires_at: TimeLike | None = None,
    ) -> str:
        """Store a document and return its id.

        The id is stable: the same ``(namespace, source, source_id)``, or the same
        ``dedupe_key``, updates the document in place; identical content is a no-op.
        """
        record = dict(locals())
        del record["self"]
        return self.write_many([record])[0].id

    def add_many(self, items: Iterable[Mapping[str, Any]], *, batch_size: int = 500) -> list[str]:
        """Store many documents (dicts of :meth:`add`'s arguments), one transaction per batch."""
        return [result.id for result in self.write_many(items, batch_size=batch_size)]

    def write_many(
        self, items: Iterable[Mapping[str, Any]], *, batch_size: int = 500
    ) -> list[WriteResult]:
        """Like :meth:`add_many`, saying for each item what the write did."""
        results: list[WriteResult] = []
        batch: list[Document] = []
        for item in items:
            batch.append(self._prepare(item))
            if len(batch) >= batch_size:
                results.extend(self._write_batch(batch))
                batch = []
        if batch:
            results.extend(self._write_batch(batch))
        return results

    def _prepare(self, item: Mapping[str, Any]) -> Document:
        unknown = set(item) - _ADD_FIELDS
        if unknown:
            raise InvalidInput(f"unknown field {', '.join(sorted(unknown))}")
        text = item.get("text")
        if not isinstance(text, str):
            raise InvalidInput(f"text must be a string, not {type(text).__name__}")
        try:
            content_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        except UnicodeEncodeError:
            raise InvalidInput("text contains lone surrogates; it is not valid Unicode") from None
        namespace = _string(item, "namespace", "default")
        if not namespace:
            raise InvalidInput("namespace must not be empty")
        source = _string(item, "source")
        source_id = item.get("source_id")
        source_id = None if source_id is None else str(source_id)
        dedupe_key = item.get("dedupe_key")
        dedupe_key = None if dedupe_key is None else str(dedupe_key)
        metadata = dict(item.get("metadata") or {})
        try:
            json.dumps(metadata)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"metadata must be JSON-serializable: {exc}") from None
        stamp = to_epoch(item.get("timestamp"), field="timestamp")
        expires = to_epoch(item.get("expires_at"), field="expires_at")
        return Document(
            id=document_id(namespace, "workspace", source, source_id, dedupe_key, content_hash),
            text=text,
            namespace=namespace,
            source=source,
            source_id=source_id,
            dedupe_key=dedupe_key,
            doc_type=_string(item, "doc_type"),
            title=_string(item, "title"),
            author=_string(item, "author"),
            participants=_strings(item, "participants"),
            timestamp=to_iso(stamp),
            url=_string(item, "url"),
            thread_id=_string(item, "thread_id"),
            channel=_string(item, "channel"),
            tags=_strings(item, "tags"),
            metadata=metadata,
            content_hash=content_hash,
            expires_at=to_iso(expires),
        )

    def _write_batch(self, docs: Sequence[Document]) -> list[WriteResult]:
        latest = {doc.id: doc for doc in docs}  # the last write of an id in a batch wins
        results: dict[str, WriteResult] = {}
        stamp = to_iso(now())
        with self.backend.transaction():
            for doc in latest.values():
                old = self.backend.get_document(doc.id, with_text=False)
                if old is not None and old.deleted_at is None and _same(old, doc):
                    results[doc.id] = WriteResult(doc.id, "unchanged")
                    continue
                created = old.created_at if old is not None else stamp
                new = replace(doc, created_at=created, updated_at=stamp)
                reindex = old is None or any(getattr(old, f) != getattr(new, f) for f in _INDEXED)
                self.backend.put_document(new, text=reindex)
                if reindex:
                    self.backend.replace_chunks(new.id, self._chunk_rows(new))
                action = "added" if old is None else "restored" if old.deleted_at else "updated"
                results[doc.id] = WriteResult(doc.id, action)
        return [results[doc.id] for doc in docs]

    def _chunk_rows(self, doc: Document) -> list[ChunkRow]:
        rows = []
        for chunk in chunk_text(doc.text, max_chars=self.chunk_chars, overlap=self.chunk_overlap):
            text = doc.text[chunk.start : chunk.end]
            head = " > ".join(part for part in (doc.title, chunk.heading) if part)
            digest = hashlib.sha256(f"{head}\x00{text}".encode()).hexdigest()
            rows.append(ChunkRow(chunk=chunk, head=head, text=text, text_hash=digest))
        return rows

    def delete(self, doc_id: str) -> None:
        """Tombstone a document: gone from search and :meth:`get`, back with :meth:`restore`."""
        doc = self.backend.get_document(doc_id, with_text=False)
        if doc is None:
            raise NotFound(f"no document with id {doc_id!r}")
        if doc.deleted_at is None:
            self.backend.set_deleted(doc_id, now())

    def restore(self, doc_id: str) -> None:
        """Undo :meth:`delete` (until :meth:`purge` removes the document for good)."""
        doc = self.backend.get_document(doc_id, with_text=False)
        if doc is None:
            raise NotFound(f"no document with id {doc_id!r} (purged documents cannot return)")
        if doc.deleted_at is not None:
            self.backend.set_deleted(doc_id, None)

    def purge(self) -> int:
        """Remove tombstoned and expired documents for good; returns how many."""
        return len(self.backend.purge(now()))

    # --- reading ----------------------------------------------------------------------

    def get(self, doc_id: str) -> Document | None:
        """The document exactly as stored, or None if absent, deleted or expired."""
        doc = self.backend.get_document(doc_id)
        if doc is None or doc.deleted_at is not None or _expired(doc):
            return None
        return doc

    def search(
        self,
        query: str,
        *,
        mode: str = "keyword",
        limit: int = 10,
        raw: bool = False,
        **filters: Any,
    ) -> list[Hit]:
        """Documents matching ``query``, best first (one hit per document).

        Filters: ``namespace``, ``source``, ``doc_type``, ``author`` (a value or a list of
        values, any of which matches), ``tags`` (all must be present), ``since``/``until``
        (on the document timestamp, inclusive), ``metadata`` (a dict of equalities).
        """
        if mode not in MODES:
            raise InvalidQuery(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
        if not isinstance(limit, int) or limit < 0:
            raise InvalidQuery("limit must be a non-negative integer")
        where = Filters.build(**filters)
        if not isinstance(query, str):
            raise InvalidQuery("query must be a string")
        parsed = parse(query, raw=raw)
        if parsed.empty or limit == 0:
            return []
        found = self.backend.keyword_search(parsed, where, limit, now())
        docs = self.backend.get_documents([h.doc_id for h in found])
        return [_hit(docs[h.doc_id], h.score, h.snippet, h.chunk) for h in found]

    def stats(self) -> Stats:
        """Counts and sizes; never loads an embedding model."""
        data = self.backend.stats(now())
        return Stats(**data, embedder=None, vectors=0)

    def ingest(self, path: str | os.PathLike[str], **options: Any) -> IngestReport:
        """Store the files under ``path``; unchanged files are skipped by content hash.

        Options: ``source`` (default: the folder's name), ``namespace``, ``include`` and
        ``exclude`` (glob patterns on the relative path), ``sync`` (tombstone documents
        whose file is gone), ``max_bytes``, ``progress`` (called with each path).
        """
        from .ingest.walk import ingest

        return ingest(self, path, **options)

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        """(source_id, doc id, content hash, deleted) for every document of one source."""
        for source_id, (doc_id, digest, deleted) in self.backend.source_hashes(
            namespace, source
        ).items():
            yield source_id, doc_id, digest, deleted


def _same(old: Document, new: Document) -> bool:
    return all(getattr(old, f) == getattr(new, f) for f in _COMPARED)


def _expired(doc: Document) -> bool:
    expires = to_epoch(doc.expires_at)
    return expires is not None and expires <= now()


def _hit(doc: Document, score: float, snippet: str, chunk: Any) -> Hit:
    return Hit(
        doc_id=doc.id,
        score=score,
        title=doc.title,
        source=doc.source,
        source_id=doc.source_id,
        snippet=snippet,
        chunk=chunk,
        namespace=doc.namespace,
        doc_type=doc.doc_type,
        author=doc.author,
        participants=doc.participants,
        timestamp=doc.timestamp,
        url=doc.url,
        thread_id=doc.thread_id,
        channel=doc.channel,
        tags=doc.tags,
        metadata=doc.metadata,
    )


def _string(item: Mapping[str, Any], name: str, default: str = "") -> str:
    value = item.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
    return value


def _strings(item: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = item.get(name) or ()
    if isinstance(value, str):
        value = (value,)
    values = tuple(value)
    if not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{name} must be a list of strings")
    return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
