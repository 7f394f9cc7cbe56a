"""The write path, one for every writer: prepare, plan, commit.

:func:`prepare` validates an item and gives it its id (once per item); :class:`Writer`
plans a batch against the stored rows (what changed, which chunks to rebuild) and commits
it. Embedding runs before the transaction (a slow model must not hold the write lock), and
only for chunks whose text has no stored vector yet; everything about one batch is then
written in one transaction, so a crash leaves the old version or the new one.

The writer is handed its parts (backend, vectorizer, chunking settings, and where change
events go) by the store that builds it; it knows nothing of the store itself.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import reprlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from trove import validate
from trove.backends.base import Backend
from trove.backends.writes import ChunkRow, DocumentWrite, Vectors
from trove.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP, chunk_text
from trove.embedders.vectorizer import Vectorizer
from trove.errors import InvalidInput
from trove.ids import document_id
from trove.memory import entry
from trove.models import CARRIED_FIELDS, DOCUMENT_FIELDS, STAMP_FIELDS, Chunk, Document, assemble
from trove.operations import own_vectors
from trove.search import snippet_text
from trove.search.filters import SCOPES
from trove.timeutil import now, to_epoch, to_iso

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

ADD_FIELDS = frozenset(
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
        "scope",
        "session",
        "importance",
        "ttl",
        *entry.FIELDS,
    ]
)
AUTHOR_TIERS = ("human", "explicit", "derived", "llm")
# The memory fields of an item that gives none (most items): validated once, not per item.
_NO_ENTRY = entry.fields({})
# Fields whose change alters what is indexed, so chunks are rebuilt.
_INDEXED = ("content_hash", "title", "indexed", "keyword_text", "semantic_text")
# Every field's default but metadata's, which every prepared document sets.
_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(Document) if f.default is not dataclasses.MISSING
}
# Characters of a text hashed at a time (text_hash).
_HASH_STEP = 1 << 20
# What a new importance is when the caller gives none.
DEFAULT_IMPORTANCE = 0.5
# Everything a caller decides (the text through its hash): equal means the write is a no-op.
_COMPARED = [f for f in DOCUMENT_FIELDS if f not in (*STAMP_FIELDS, *CARRIED_FIELDS, "text")]


@dataclass(frozen=True)
class WriteResult:
    """What one write did: ``added``, ``updated``, ``unchanged`` or ``restored``, and how
    many chunks it (re)indexed."""

    id: str
    action: str
    chunks: int = 0


@dataclass
class _Plan:
    doc: Document
    action: str
    chunks: list[ChunkRow] = field(default_factory=list)
    reindex: bool = False
    # Chunked again as stored (Writer.rechunk): written unless the document has gone.
    rechunk: bool = False


def prepare(
    item: Mapping[str, Any], *, author_tier: str = "explicit", doc_id: str | None = None
) -> Document:
    """Validate one item of :meth:`Store.add_many` and give it its id.

    ``author_tier`` comes from the interface that received the write, never from the item;
    ``doc_id`` keeps the id of a document being updated.
    """
    if not ADD_FIELDS.issuperset(item):
        unknown = set(item) - ADD_FIELDS
        raise InvalidInput(f"unknown field {', '.join(sorted(unknown))}")
    if author_tier not in AUTHOR_TIERS:
        raise InvalidInput(f"author_tier must be one of {', '.join(AUTHOR_TIERS)}")
    title = _string(item, "title")
    text = _item_text(item, title)
    content_hash = text_hash(text)
    namespace = validate.key_part(_string(item, "namespace", "default"), "namespace")
    if not namespace:
        raise InvalidInput("namespace must not be empty")
    scope = _string(item, "scope", "workspace")
    if scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    session = validate.key_part(_string(item, "session"), "session")
    if scope == "session" and not session:
        raise InvalidInput("a session-scoped item needs a session")
    source = validate.key_part(_string(item, "source"), "source")
    source_id = _key(item, "source_id")
    dedupe_key = _key(item, "dedupe_key")
    metadata = validate.metadata(item.get("metadata"))
    if doc_id is None:
        # A payload without text or key is known by its metadata, as a note by its text.
        seed = _payload_hash(metadata) if not text and entry.payload_only(item) else content_hash
        doc_id = document_id(namespace, scope, source, source_id, dedupe_key, seed, session)
    return assemble(
        Document,
        {
            **_DEFAULTS,
            "id": doc_id,
            "text": text,
            "namespace": namespace,
            "scope": scope,
            "session_id": session if scope == "session" else "",
            "source": source,
            "source_id": source_id,
            "dedupe_key": dedupe_key,
            "doc_type": _string(item, "doc_type"),
            "title": title,
            "author": _string(item, "author"),
            "participants": _strings(item, "participants"),
            "timestamp": _timestamp(item.get("timestamp")),
            "url": _string(item, "url"),
            "thread_id": _string(item, "thread_id"),
            "channel": _string(item, "channel"),
            "tags": _strings(item, "tags"),
            "metadata": metadata,
            "content_hash": content_hash,
            "importance": _importance(item.get("importance")),
            "author_tier": author_tier,
            "expires_at": _expires(item),
            **(entry.fields(item) if not entry.FIELDS.isdisjoint(item) else _NO_ENTRY),
        },
    )


def _item_text(item: Mapping[str, Any], title: str) -> str:
    """An item's text: something besides white space, unless the item has a title or is a
    payload-only entry (index none: never found by a query), which may have none at all."""
    payload = entry.payload_only(item)
    return validate.text(
        item.get("text", "" if payload else None), titled=bool(title.strip()) or payload
    )


def _payload_hash(metadata: Mapping[str, Any]) -> str:
    return text_hash("payload\x00" + json.dumps(metadata, sort_keys=True, default=str))


def text_hash(text: str) -> str:
    """The SHA-256 of ``text``'s UTF-8, a megabyte at a time: a large text is not copied
    whole to be hashed."""
    digest = hashlib.sha256()
    for start in range(0, len(text), _HASH_STEP):
        digest.update(text[start : start + _HASH_STEP].encode("utf-8"))
    return digest.hexdigest()


def _timestamp(value: Any) -> str | None:
    return None if value is None else to_iso(to_epoch(value, field="timestamp"))


def _expires(item: Mapping[str, Any]) -> str | None:
    expires_at, ttl = item.get("expires_at"), item.get("ttl")
    if expires_at is None and ttl is None:  # most items
        return None
    return to_iso(_expiry(expires_at, ttl))


def _importance(value: Any) -> float:
    if value is None:
        return DEFAULT_IMPORTANCE
    return validate.number(value, "importance", *validate.IMPORTANCE_RANGE)


def _key(item: Mapping[str, Any], name: str) -> str | None:
    value = item.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
    return validate.key_part(validate.unicode(str(value), name), name)


def _expiry(expires_at: Any, ttl: Any) -> float | None:
    if ttl is None:
        return to_epoch(expires_at, field="expires_at")
    if expires_at is not None:
        raise InvalidInput("give expires_at or ttl, not both")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < 1e11:
        raise InvalidInput(f"ttl must be a positive number of seconds, not {reprlib.repr(ttl)}")
    return now() + float(ttl)


# Where a committed change is announced: kind ("written", "updated", "restored") and doc.
Notify = Callable[[str, Document], None]


@dataclass(frozen=True)
class Chunker:
    """How documents are cut into chunks (``chunk_chars``/``chunk_overlap`` of trove.open)."""

    max_chars: int = DEFAULT_MAX_CHARS
    overlap: int = DEFAULT_OVERLAP

    def rows(self, doc: Document) -> list[ChunkRow]:
        return chunk_rows(doc, self.max_chars, self.overlap)


class Writer:
    """A store's one write path: :meth:`prepare` items, then :meth:`write` the documents
    (:meth:`plan` against the stored rows, :meth:`commit` in one transaction)."""

    def __init__(
        self, backend: Backend, vectorizer: Vectorizer, chunker: Chunker, notify: Notify
    ) -> None:
        self.backend = backend
        self.vectorizer = vectorizer
        self.chunker = chunker
        self.notify = notify

    def prepare(
        self, item: Mapping[str, Any], *, author_tier: str = "explicit", doc_id: str | None = None
    ) -> Document:
        """:func:`prepare`: validate one item and give it its id."""
        return prepare(item, author_tier=author_tier, doc_id=doc_id)

    def write(
        self,
        docs: Sequence[Document],
        given: Mapping[str, np.ndarray] | None = None,
        cut: Mapping[str, list[ChunkRow]] | None = None,
    ) -> list[WriteResult]:
        """Write documents that were prepared; the last write of an id wins.
        ``given``: the vectors callers brought, by document id; ``cut``: the chunks
        callers cut them into (:func:`trove.chunk_spans.given_chunks`), by document id."""
        plans = self.plan(docs)
        for doc_id, rows in (cut or {}).items():
            plan = plans[doc_id]
            stored = self.backend.get_document(doc_id) if plan.action == "unchanged" else None
            if stored is not None:  # the same document, cut anew: as rechunk does
                plans[doc_id] = _Plan(stored, "updated", rows, True, True)
            else:
                plan.chunks, plan.reindex = rows, True
        return self.commit(docs, plans, given or {})

    def rechunk(self, docs: Sequence[Document]) -> list[WriteResult]:
        """Cut stored documents into chunks again with this writer's chunker and index
        the chunks (embedding them), in one transaction; each document's row and id stay,
        and nothing is announced (its content did not change). A document deleted or
        gone meanwhile is left alone (``unchanged``)."""
        plans = {d.id: _Plan(d, "updated", self.chunker.rows(d), True, True) for d in docs}
        return self.commit(docs, plans, {})

    def plan(self, docs: Sequence[Document]) -> dict[str, _Plan]:
        """What writing ``docs`` changes, by id, against what is stored now."""
        stamp = to_iso(now())
        plans: dict[str, _Plan] = {}
        unique = {d.id: d for d in docs}
        stored = self.backend.get_documents(list(unique))  # one read for the batch
        for doc in unique.values():
            old = stored.get(doc.id)
            if old is not None and old.deleted_at is None and _same(old, doc):
                plans[doc.id] = _Plan(doc, "unchanged")
                continue
            carried = {f: getattr(old, f) for f in CARRIED_FIELDS} if old is not None else {}
            new = _evolve(
                doc, created_at=old.created_at if old else stamp, updated_at=stamp, **carried
            )
            action = _action(old)
            reindex = old is None or any(getattr(old, f) != getattr(new, f) for f in _INDEXED)
            chunks = self.chunker.rows(new) if reindex else []
            plans[doc.id] = _Plan(new, action, chunks, reindex)
        return plans

    def commit(
        self,
        docs: Sequence[Document],
        plans: dict[str, _Plan],
        given: Mapping[str, np.ndarray],
    ) -> list[WriteResult]:
        """Embed the plans' new chunks, then write them in one transaction and announce
        what changed; one result per document of ``docs``, in order."""
        fresh = _rows(plans)
        vectors, has = self._vectors(fresh, plans, given)
        with self.backend.transaction():
            _, written_ids = self._put(plans)
            if vectors is not None and len(fresh) != len(written_ids):
                # A re-planned document brought new chunks.
                fresh = _rows(plans)
                vectors, has = self._vectors(fresh, plans, given)
            vector_ids = written_ids if has is None else [written_ids[i] for i in has]
            if vectors is not None:
                self.backend.put_vectors(vectors.table, vector_ids, vectors.matrix)
        for plan in plans.values():
            if plan.action != "unchanged" and not plan.rechunk:
                kind = {"added": "written", "restored": "restored"}.get(plan.action, "updated")
                self.notify(kind, plan.doc)
        return [WriteResult(d.id, plans[d.id].action, len(plans[d.id].chunks)) for d in docs]

    def _vectors(
        self,
        rows: list[tuple[str, ChunkRow]],
        plans: Mapping[str, _Plan],
        given: Mapping[str, np.ndarray],
    ) -> tuple[Vectors | None, list[int] | None]:
        return own_vectors.vectors_for(
            self.backend, self.vectorizer, rows, given, _no_vector(plans)
        )

    def _put(self, plans: Mapping[str, _Plan]) -> tuple[list[int], list[int]]:
        """Inside the write transaction. Another writer may have committed since we
        planned: correct the plans against what is stored now (one read), then write them
        in one batch. Returns the chunk ids dropped and written."""
        pending = [plan for plan in plans.values() if plan.action != "unchanged"]
        current = self.backend.get_documents([plan.doc.id for plan in pending])
        for plan in pending:
            self._recheck(plan, current.get(plan.doc.id))
        writes = [
            DocumentWrite(plan.doc, plan.reindex, plan.chunks, plan.action == "added")
            for plan in pending
            if plan.action != "unchanged"
        ]
        return self.backend.put_many(writes)

    def _recheck(self, plan: _Plan, current: Document | None) -> None:
        """Correct a plan made before the transaction against what is now stored
        (``current``), so concurrent writers of one key get one ``added`` and consistent
        rows."""
        if plan.rechunk:
            if current is None or current.deleted_at is not None or not _same(current, plan.doc):
                plan.action = "unchanged"  # deleted or changed since: not this plan's to write
            return
        if current is not None and current.deleted_at is None and _same(current, plan.doc):
            plan.action = "unchanged"
            return
        plan.action = _action(current)
        if current is not None:
            carried = {f: getattr(current, f) for f in CARRIED_FIELDS}
            plan.doc = _evolve(plan.doc, created_at=current.created_at, **carried)
        if not plan.reindex and (
            current is None or any(getattr(current, f) != getattr(plan.doc, f) for f in _INDEXED)
        ):
            plan.reindex = True
            plan.chunks = self.chunker.rows(plan.doc)


def _action(stored: Document | None) -> str:
    """What writing over ``stored`` (None: nothing) does."""
    return "added" if stored is None else "restored" if stored.deleted_at else "updated"


def _no_vector(plans: Mapping[str, _Plan]) -> set[str]:
    return {doc_id for doc_id, plan in plans.items() if not entry.semantic(plan.doc)}


def _rows(plans: Mapping[str, _Plan]) -> list[tuple[str, ChunkRow]]:
    return [(plan.doc.id, row) for plan in plans.values() for row in plan.chunks]


def chunk_rows(doc: Document, max_chars: int, overlap: int) -> list[ChunkRow]:
    if entry.controlled(doc):
        return entry.rows(doc)
    # Front matter and HTML comments are blanked in place: neither indexed nor shown.
    clean = snippet_text.mask(doc.text, doc.doc_type)
    chunks = chunk_text(clean, max_chars=max_chars, overlap=overlap)
    if clean != doc.text:
        chunks = _trimmed(chunks, clean)
    if not chunks:
        # A titled document with no text (a title-only record): one chunk spans its blank
        # text, so the chunks still cover the text exactly (`get` and `check` hold) and the
        # title, indexed and embedded as the chunk's head, is what finds it.
        chunks = [Chunk(index=0, start=0, end=len(doc.text))]
    return [
        chunk_row(doc, found if found.index == i else replace(found, index=i), clean)
        for i, found in enumerate(chunks)
    ]


def chunk_row(doc: Document, chunk: Chunk, clean: str | None = None) -> ChunkRow:
    """A span of a document as it is stored: its text (with front matter and HTML comments
    blanked: ``clean``, computed here if not given), the title and headings above it
    (indexed with it), and the hash that finds its vector."""
    if clean is None:
        clean = snippet_text.mask(doc.text, doc.doc_type)
    text = clean[chunk.start : chunk.end]
    head = " > ".join(filter(None, (doc.title, chunk.heading)))
    digest = hashlib.sha256(f"{head}\x00{text}".encode()).hexdigest()
    return ChunkRow(chunk=chunk, head=head, text=text, text_hash=digest)


def _evolve(doc: Document, **changes: Any) -> Document:
    """``dataclasses.replace`` for a document, without its per-field work (which was a
    fifth of the Python time of a bulk write): Document is a plain frozen dataclass, with
    no ``__post_init__`` and no slots, so a copy of its fields is the same document."""
    # One merged dict, then one update of the new instance's: two updates of it cost
    # twice as much (the second replaces keys of a key-sharing dict).
    return assemble(Document, {**doc.__dict__, **changes})


def _trimmed(chunks: list[Chunk], text: str) -> list[Chunk]:
    """Chunks without the blanked space they open with (none left empty)."""
    kept = []
    for chunk in chunks:
        start = (
            chunk.start
            + len(text[chunk.start : chunk.end])
            - len(text[chunk.start : chunk.end].lstrip())
        )
        if start < chunk.end:
            kept.append(replace(chunk, start=start))
    return kept


def _same(old: Document, new: Document) -> bool:
    return all(getattr(old, f) == getattr(new, f) for f in _COMPARED)


def _string(item: Mapping[str, Any], name: str, default: str = "") -> str:
    value = item.get(name)
    if value is None:
        return default
    return validate.string(value, name)


def _strings(item: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = item.get(name) or ()
    if value == ():  # not given
        return ()
    if not isinstance(value, str | list | tuple | set | frozenset):
        raise InvalidInput(f"{name} must be a list of strings, not {type(value).__name__}")
    values = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{name} must be a list of strings")
    for v in values:
        validate.unicode(v, name)
    return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
