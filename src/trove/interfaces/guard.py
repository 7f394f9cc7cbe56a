"""One store shared by a server's request threads, and the error codes servers report.

Both servers run request handlers on worker threads over one Store. The backend runs
one SQL statement at a time and keeps a transaction to its thread, but a write is more
than its transaction: it reads first (is this key taken? which chunks change?), commits,
then updates the in-memory vector index. Two writes to one item could interleave those
steps, and a search between them could see the rows without their vectors. So a
:class:`Guard` lets searches and reads run together and a write run alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from trove import errors
from trove.interfaces.config import Rights
from trove.rwlock import ReadWriteLock

if TYPE_CHECKING:  # the CLI imports this module for its error codes: no store at import
    from trove.store import Store
    from trove.workspace import Workspace

# (HTTP status, code) by error class; the first match in this order wins.
ERROR_CODES: tuple[tuple[type[errors.TroveError], int, str], ...] = (
    (errors.NotFound, 404, "not_found"),
    (errors.Forbidden, 403, "forbidden"),
    (errors.InvalidQuery, 400, "invalid_query"),
    (errors.ContentTooLarge, 413, "content_too_large"),
    (errors.InvalidInput, 422, "invalid_input"),
    (errors.EmbedderMismatch, 409, "embedder_mismatch"),
    (errors.EmbedderError, 503, "embedder_unavailable"),
    (errors.MissingDependency, 501, "missing_dependency"),
    (errors.StoreError, 500, "store_error"),
)


def error_code(exc: errors.TroveError) -> tuple[int, str]:
    """The HTTP status and stable error code for a library error."""
    for kind, status, code in ERROR_CODES:
        if isinstance(exc, kind):
            return status, code
    return 500, "trove_error"


class Guard:
    """Hands out workspaces: reads share the store, a write has it to itself."""

    def __init__(
        self, store: Store, *, author_tier: str, max_content_tokens: int | None = None
    ) -> None:
        self.store = store
        self.author_tier = author_tier
        self.max_content_tokens = max_content_tokens
        self._lock = ReadWriteLock()

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
        with self._lock.read():
            yield self.workspace(rights, session)

    @contextmanager
    def write(self, rights: Rights, session: str | None = None) -> Iterator[Workspace]:
        with self._lock.write():
            yield self.workspace(rights, session)
