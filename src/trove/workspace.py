"""A caller's view of a store: one namespace, one session, the caller's rights.

MCP and HTTP hand every request to a :class:`Workspace`, so the memory rules live here
once: the namespace is fixed by configuration (never chosen by the caller), session items
are private to their session, global items are readable everywhere but writable only with
``allow_global``, ``author_tier`` is stamped here, and anything outside the workspace looks
exactly like something that does not exist.

The session rule, in one place (:meth:`Workspace.reader_session`): a caller without a
session sees no session-scoped item at all. Only the library's own ``Store`` (the
owner's view, outside any workspace) reads every session.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trove import originals
from trove.errors import Forbidden, InvalidInput, NotFound
from trove.hits import Hit
from trove.ingest.ownership import owning_file
from trove.limits import check_content
from trove.memory.canonical import DuplicateGroup
from trove.memory.clusters import Cluster
from trove.models import Document, Edge, Page, Stats
from trove.operations.upsert import Prepared
from trove.originals import Original, OriginalInfo

if TYPE_CHECKING:
    from trove.store import Store

# Fields a caller may never send: the workspace decides them, and a value the caller
# believes was applied but was not is worse than a refusal.
_STAMPED = ("session", "author_tier")
# The session filter of a reader without a session. Every session-scoped item has a
# non-empty session id, so it matches none of them (None would match all of them).
NO_SESSION = ""


class Workspace:
    """The store as one caller may see and change it."""

    def __init__(
        self,
        store: Store,
        namespace: str = "default",
        *,
        session: str | None = None,
        author_tier: str = "explicit",
        allow_write: bool = True,
        allow_delete: bool = True,
        allow_global: bool = False,
        allow_file_edits: bool = False,
        max_content_tokens: int | None = None,
    ) -> None:
        if not namespace:
            raise InvalidInput("a workspace needs a namespace")
        self.store = store
        self.namespace = namespace
        self.session = session
        self.author_tier = author_tier
        self.allow_write = allow_write
        self.allow_delete = allow_delete
        self.allow_global = allow_global
        # A document from an ingested file is the file's: edit the file, not the copy.
        self.allow_file_edits = allow_file_edits
        # Servers bound what an agent writes (None: no bound, the library's default).
        self.max_content_tokens = max_content_tokens

    # --- reading ----------------------------------------------------------------------

    def get(self, doc_id: str) -> Document | None:
        """The document if this workspace can see it; otherwise None, as if absent."""
        doc = self.store.get(doc_id)
        return doc if doc is not None and self._visible(doc) else None

    def get_by_key(
        self,
        source: str | None = None,
        source_id: str | None = None,
        *,
        dedupe_key: str | None = None,
        scope: str = "workspace",
    ) -> Document | None:
        """The document this workspace wrote under a natural key (``source`` and
        ``source_id``, or ``dedupe_key``) in ``scope``, if it can see it; else None."""
        from trove.operations.lifecycle import key_id  # the write path's modules, at first use

        doc_id = key_id(source, source_id, dedupe_key, self.namespace, scope, self.session)
        return self.get(doc_id)

    def chunk_vectors(self, doc_id: str) -> builtins.list[builtins.list[float] | None]:
        """Its chunks' vectors, if this workspace can see the document; else NotFound."""
        self._require(doc_id)
        return self.store.chunk_vectors(doc_id)

    def original_info(self, doc_id: str) -> OriginalInfo:
        """Its original's name, type and size, if this workspace can see the document;
        otherwise NotFound, as if absent."""
        self._require(doc_id)
        return self.store.original_info(doc_id)

    def original(self, doc_id: str) -> Original:
        self._require(doc_id)
        return self.store.original(doc_id)

    def original_pieces(self, doc_id: str) -> Iterator[bytes]:
        self._require(doc_id)
        return self.store.original_pieces(doc_id)

    @property
    def reader_session(self) -> str:
        """The session filter every read of this workspace uses (see the module doc)."""
        return self.session or NO_SESSION

    def search(self, query: str, **options: Any) -> builtins.list[Hit]:
        self._own_namespace(options.pop("namespace", None))
        _refuse_stamped(options)
        return self.store.search(
            query, namespace=self.namespace, session=self.reader_session, **options
        )

    def get_many(self, ids: builtins.list[str]) -> builtins.list[Document | None]:
        """Each id's document if visible, else None, in the order asked."""
        return [self.get(doc_id) for doc_id in ids]

    def deleted(self, doc_id: str) -> Document | None:
        """A tombstoned document this workspace can see (to show and restore it)."""
        doc = self.store.backend.get_document(doc_id)
        if doc is None or doc.deleted_at is None or not self._visible(doc):
            return None
        return doc

    def list(self, **options: Any) -> Page:
        self._own_namespace(options.pop("namespace", None))
        _refuse_stamped(options)
        return self.store.list(self.namespace, session=self.reader_session, **options)

    def neighbors(self, doc_id: str, type: str | None = None) -> builtins.list[Edge]:
        self._require(doc_id)
        edges = self.store.neighbors(doc_id, type)
        other = [self.store.peek(e.dst if e.src == doc_id else e.src) for e in edges]
        return [e for e, doc in zip(edges, other, strict=True) if doc and self._visible(doc)]

    def stats(self) -> Stats:
        return self.store.stats(namespace=self.namespace, session=self.reader_session)

    def sees(self, event: Mapping[str, Any]) -> bool:
        """Whether a change event (:mod:`trove.events`) is about an item this workspace
        can see: the same rule as for documents, read from the event's fields."""
        return self._sees(event["namespace"], event["scope"], event.get("session_id"))

    # --- clusters: the namespace's, showing only the members this workspace can see ----

    def clusters(self) -> builtins.list[Cluster]:
        return [self.shown(c) for c in self.store.clusters.list(self.namespace)]

    def cluster(self, cluster_id: str) -> Cluster:
        """The cluster if it is this namespace's; otherwise NotFound, as if absent."""
        try:
            cluster = self.store.clusters.get(cluster_id)
        except NotFound:
            cluster = None
        if cluster is None or cluster.namespace != self.namespace:
            raise NotFound(f"no cluster with id {cluster_id!r}")
        return self.shown(cluster)

    def shown(self, cluster: Cluster) -> Cluster:
        """``cluster`` as this workspace may see it: another session's private members
        are left out (a cluster is the namespace's, its members need not be)."""
        docs = [self.store.backend.get_document(m, with_text=False) for m in cluster.members]
        members = [m for m, d in zip(cluster.members, docs, strict=True) if d and self._visible(d)]
        return replace(cluster, members=tuple(members))

    # --- writing ----------------------------------------------------------------------

    def add(self, text: str, **fields: Any) -> str:
        return self.write({"text": text, **fields})

    def write(self, item: Mapping[str, Any]) -> str:
        """Add or upsert one item; returns its id."""
        self._writable()
        check_content(item.get("text"), self.max_content_tokens)
        _refuse_stamped(item)
        fields = dict(item)
        on_conflict = fields.pop("on_conflict", None) or "replace"
        self._own_namespace(fields.pop("namespace", None))
        if fields.get("scope") == "global" and not self.allow_global:
            raise Forbidden("this caller may not write global items")
        if fields.get("scope") == "session":
            if not self.session:
                raise InvalidInput("session-scoped writes need a session")
            fields["session"] = self.session
        fields["namespace"] = self.namespace
        # Prepared once, here: its id says whose key it is, and the write uses it as is.
        tier = self.author_tier or self.store.author_tier  # as Store.write_many decides it
        # A caller's own vector and chunks ride along to the write; the document is made
        # without them.
        riding = {k: v for k, v in fields.items() if k not in ("vector", "chunks")}
        doc = self.store.writer.prepare(riding, author_tier=tier)
        existing = self.store.peek(doc.id)
        if existing is not None and not self._visible(existing):
            raise Forbidden("an item with this key belongs to another session")
        result = self.store.write_many(
            [Prepared(fields, doc)], author_tier=tier, on_conflict=on_conflict
        )[0]
        return result.id

    def write_many(
        self,
        items: Sequence[Mapping[str, Any]],
        links: Sequence[Mapping[str, Any]] = (),
    ) -> builtins.list[str]:
        """Write several items, and links among them or to items this workspace sees, in
        one transaction: all are kept, or none if one is refused. A link is ``src``,
        ``dst`` (an id, or ``"#N"``: the Nth item of this batch, from 0), ``type`` and
        ``weight``."""
        with self.store.transaction():
            ids = [self.write(item) for item in items]
            for link in links:
                unknown = set(link) - {"src", "dst", "type", "weight"}
                if unknown:
                    raise InvalidInput(f"unknown link field {', '.join(sorted(unknown))}")
                src, dst = (_batch_id(link.get(end), ids) for end in ("src", "dst"))
                self.link(src, dst, link.get("type", "relates_to"), link.get("weight", 1.0))
        return ids

    def update(self, doc_id: str, **changes: Any) -> str:
        check_content(changes.get("text"), self.max_content_tokens)
        self._changeable(doc_id)
        _refuse_stamped(changes)
        self._own_namespace(changes.pop("namespace", None))
        return self.store.update(doc_id, **changes)

    def attach_original(
        self, doc_id: str, data: bytes, name: str = "", media_type: str = ""
    ) -> OriginalInfo:
        """Keep ``data`` as the original of an item this workspace may change, replacing
        the one it had. Bytes only, never a path: a caller names no file of the host."""
        if not isinstance(data, bytes | bytearray):
            raise InvalidInput("an original is sent as bytes")
        self._changeable(doc_id)
        return originals.keep(self.store, doc_id, bytes(data), name, media_type)

    def delete(self, doc_id: str, *, hard: bool = False) -> bool:
        """Tombstone an item (False when it was already deleted or has expired: deleting
        is idempotent, and an expired item is already gone), or with ``hard`` remove it
        for good."""
        if not self.allow_delete:
            raise Forbidden("deletes are not allowed for this caller")
        stored = self.store.backend.get_document(doc_id, with_text=False)
        if (
            stored is not None
            and (stored.deleted_at is not None or stored.expired)
            and self._visible(stored)
        ):
            return False
        doc = self._require(doc_id)
        if doc.scope == "global" and not self.allow_global:
            raise Forbidden("this caller may not delete global items")
        if hard:
            return self.store.purge(ids=[doc_id]) > 0
        return self.store.delete(doc_id)

    def restore(self, doc_id: str) -> bool:
        """Undo a delete; False when it was not deleted (restoring is idempotent)."""
        if not self.allow_delete:
            raise Forbidden("deletes (and restores) are not allowed for this caller")
        doc = self.deleted(doc_id)
        if doc is None:
            self._require(doc_id)  # absent or not yours: not_found
            return False
        if doc.scope == "global" and not self.allow_global:
            raise Forbidden("this caller may not restore global items")
        self.store.restore(doc_id)
        return True

    def link(self, src: str, dst: str, type: str = "relates_to", weight: float = 1.0) -> Edge:
        self._writable()
        self._require(src)
        self._require(dst)
        return self.store.link(src, dst, type, weight)

    def unlink(self, src: str, dst: str, type: str | None = None) -> int:
        self._writable()
        self._require(src)
        self._require(dst)
        return self.store.unlink(src, dst, type)

    # --- upkeep -----------------------------------------------------------------------

    def canonicalize(self, **options: Any) -> builtins.list[DuplicateGroup]:
        """Fold near-duplicates among the items of this namespace this workspace sees
        (:func:`trove.memory.canonical.canonicalize`'s ``threshold``, ``text_threshold``,
        ``rule``, ``dry_run``); another session's items are never compared or marked."""
        self._own_namespace(options.pop("namespace", None))
        _refuse_stamped(options)
        if not options.get("dry_run"):
            self._writable()
        return self.store.canonicalize(
            namespace=self.namespace, session=self.reader_session, **options
        )

    def clear(self) -> int:
        """Remove for good every item of this namespace that this workspace may delete:
        its workspace items, its own session's, global ones only with ``allow_global``.
        Another session's items stay. Returns how many were removed."""
        if not self.allow_delete:
            raise Forbidden("deletes are not allowed for this caller")
        backend = self.store.backend
        with self.store.transaction():
            docs = backend.get_documents(backend.namespace_documents(self.namespace))
            doomed = [
                doc.id
                for doc in docs.values()
                if self._visible(doc) and (doc.scope != "global" or self.allow_global)
            ]
            return self.store.purge(ids=doomed)

    # --- rules ------------------------------------------------------------------------

    def _changeable(self, doc_id: str) -> Document:
        """The item, if this caller may change it (else NotFound or Forbidden)."""
        self._writable()
        doc = self._require(doc_id)
        if doc.scope == "global" and not self.allow_global:
            raise Forbidden("this caller may not change global items")
        rel = None if self.allow_file_edits else owning_file(self.store.backend, doc)
        if rel is not None:
            raise Forbidden(
                f"this item comes from the ingested file {rel!r} (source {doc.source!r}); "
                "edit the file and ingest it again"
            )
        return doc

    def _visible(self, doc: Document) -> bool:
        return self._sees(doc.namespace, doc.scope, doc.session_id)

    def _sees(self, namespace: str, scope: str, session_id: str | None) -> bool:
        if scope == "global":
            return True
        if namespace != self.namespace:
            return False
        return scope != "session" or session_id == self.reader_session

    def _require(self, doc_id: str) -> Document:
        doc = self.store.peek(doc_id)
        doc = doc if doc is not None and self._visible(doc) else None
        if doc is None:  # the same answer whether it is absent or someone else's
            raise NotFound(f"no document with id {doc_id!r}")
        return doc

    def _own_namespace(self, namespace: object) -> None:
        if namespace not in (None, self.namespace):
            raise Forbidden(f"this workspace is {self.namespace!r}; it cannot reach others")

    def _writable(self) -> None:
        if not self.allow_write:
            raise Forbidden("writes are not allowed for this caller")


def _refuse_stamped(fields: Mapping[str, Any]) -> None:
    sent = [name for name in _STAMPED if name in fields]
    if sent:
        raise InvalidInput(
            f"{', '.join(sent)} cannot be set by a caller: the server decides it "
            "(the session comes from the connection, the author tier from the token)"
        )


def _without(fields: Mapping[str, Any], name: str) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if key != name}


def _batch_id(ref: Any, ids: Sequence[str]) -> str:
    """An id, or ``"#N"``: the id of the Nth item written in the same batch."""
    if not isinstance(ref, str) or not ref:
        raise InvalidInput("a link's src and dst are ids, or #N for the Nth item of the batch")
    if not ref.startswith("#"):
        return ref
    if not ref[1:].isdigit() or int(ref[1:]) >= len(ids):
        raise InvalidInput(f"{ref!r} names no item of this batch ({len(ids)} items: #0..)")
    return ids[int(ref[1:])]
