"""A caller's view of a store: one namespace, one session, the caller's rights.

MCP and HTTP hand every request to a :class:`Workspace`, so the memory rules live here
once: the namespace is fixed by configuration (never chosen by the caller), session items
are private to their session, global items are readable everywhere but writable only with
``allow_global``, ``author_tier`` is stamped here, and anything outside the workspace looks
exactly like something that does not exist.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import Forbidden, InvalidInput, NotFound
from .limits import check_content
from .models import Document, Edge, Hit, Page, Stats

if TYPE_CHECKING:
    from .store import Store

# Fields a caller may never set: the workspace decides them.
_STAMPED = ("namespace", "session", "author_tier")


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
        # Servers bound what an agent writes (None: no bound, the library's default).
        self.max_content_tokens = max_content_tokens

    # --- reading ----------------------------------------------------------------------

    def get(self, doc_id: str) -> Document | None:
        """The document if this workspace can see it; otherwise None, as if absent."""
        doc = self.store.get(doc_id)
        return doc if doc is not None and self._visible(doc) else None

    def search(self, query: str, **options: Any) -> builtins.list[Hit]:
        self._own_namespace(options.pop("namespace", None))
        return self.store.search(query, namespace=self.namespace, session=self.session, **options)

    def list(self, **options: Any) -> Page:
        self._own_namespace(options.pop("namespace", None))
        return self.store.list(self.namespace, session=self.session, **options)

    def neighbors(self, doc_id: str, type: str | None = None) -> builtins.list[Edge]:
        self._require(doc_id)
        edges = self.store.neighbors(doc_id, type)
        other = [self.store.peek(e.dst if e.src == doc_id else e.src) for e in edges]
        return [e for e, doc in zip(edges, other, strict=True) if doc and self._visible(doc)]

    def stats(self) -> Stats:
        return self.store.stats(namespace=self.namespace)

    # --- writing ----------------------------------------------------------------------

    def add(self, text: str, **fields: Any) -> str:
        return self.write({"text": text, **fields})

    def write(self, item: Mapping[str, Any]) -> str:
        """Add or upsert one item; returns its id."""
        self._writable()
        check_content(item.get("text"), self.max_content_tokens)
        fields = {k: v for k, v in item.items() if k not in _STAMPED}
        self._own_namespace(item.get("namespace"))
        if fields.get("scope") == "global" and not self.allow_global:
            raise Forbidden("this caller may not write global items")
        if fields.get("scope") == "session":
            if not self.session:
                raise InvalidInput("session-scoped writes need a session")
            fields["session"] = self.session
        fields["namespace"] = self.namespace
        existing = self.store.peek(self._id_for(fields))
        if existing is not None and not self._visible(existing):
            raise Forbidden("an item with this key belongs to another session")
        result = self.store.write_many([fields], author_tier=self.author_tier)[0]
        return result.id

    def update(self, doc_id: str, **changes: Any) -> str:
        self._writable()
        check_content(changes.get("text"), self.max_content_tokens)
        doc = self._require(doc_id)
        if doc.scope == "global" and not self.allow_global:
            raise Forbidden("this caller may not change global items")
        for name in _STAMPED:
            changes.pop(name, None)
        return self.store.update(doc_id, author_tier=self.author_tier, **changes)

    def delete(self, doc_id: str) -> None:
        if not self.allow_delete:
            raise Forbidden("deletes are not allowed for this caller")
        doc = self._require(doc_id)
        if doc.scope == "global" and not self.allow_global:
            raise Forbidden("this caller may not delete global items")
        self.store.delete(doc_id)

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

    # --- rules ------------------------------------------------------------------------

    def _visible(self, doc: Document) -> bool:
        if doc.scope == "global":
            return True
        if doc.namespace != self.namespace:
            return False
        return doc.scope != "session" or doc.session_id == self.session

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

    def _id_for(self, fields: Mapping[str, Any]) -> str:
        from . import writer

        return writer.prepare(fields).id
