"""Each server request's workspace: made from the caller's rights and session, handed out
under the store's read or write lock.

Both servers run request handlers on worker threads over one Store; the store's
reader-writer lock (:meth:`Store.reading`, :meth:`Store.writing`) lets searches and reads
run together and a write run alone. A request states which it is by asking for a reading
or a writing workspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from trove.interfaces.config import Rights

if TYPE_CHECKING:  # servers build this over an open store; importing it opens nothing
    from trove.store import Store
    from trove.workspace import Workspace


class Workspaces:
    """Hands out callers' workspaces: reads share the store, a write has it to itself."""

    def __init__(
        self, store: Store, *, author_tier: str, max_content_tokens: int | None = None
    ) -> None:
        self.store = store
        self.author_tier = author_tier
        self.max_content_tokens = max_content_tokens

    def workspace(self, rights: Rights, session: str | None = None) -> Workspace:
        """The caller's workspace; a session fixed by configuration wins over the request's."""
        return self.store.workspace(
            rights.namespace,
            session=rights.session or session,
            author_tier=rights.author_tier or self.author_tier,
            allow_write=rights.allow_write,
            allow_delete=rights.allow_delete,
            allow_global=rights.allow_global,
            allow_file_edits=rights.allow_file_edits,
            max_content_tokens=self.max_content_tokens,
        )

    @contextmanager
    def read(self, rights: Rights, session: str | None = None) -> Iterator[Workspace]:
        with self.store.reading():
            yield self.workspace(rights, session)

    @contextmanager
    def write(self, rights: Rights, session: str | None = None) -> Iterator[Workspace]:
        with self.store.writing():
            yield self.workspace(rights, session)
