"""One store shared by a server's request threads, and the error codes servers report.

Both servers run request handlers on worker threads over one Store, that is one apsw
connection, and that connection is not for concurrent use: apsw refuses a second thread
while one is inside it (``ThreadingViolationError``, seen with 8 threads searching), and
SQLite keeps one transaction per connection, not per thread, so a read during another
thread's write would see its uncommitted rows. So handlers reach the store through a
:class:`Guard`, one at a time; parsing and formatting still run in parallel. Other
processes writing the same file are SQLite's business (WAL and the busy timeout).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .. import errors
from ..store import Store
from ..workspace import Workspace
from .config import Rights

# (HTTP status, code) by error class; the first match in this order wins.
ERROR_CODES: tuple[tuple[type[errors.TroveError], int, str], ...] = (
    (errors.NotFound, 404, "not_found"),
    (errors.Forbidden, 403, "forbidden"),
    (errors.InvalidQuery, 400, "invalid_query"),
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
    """Hands out workspaces, one caller at a time.

    ``read`` and ``write`` take the same lock today; they are kept apart so that a store
    that can serve reads in parallel (a connection per thread) needs no change here.
    """

    def __init__(self, store: Store, *, author_tier: str) -> None:
        self.store = store
        self.author_tier = author_tier
        self._lock = threading.Lock()

    def workspace(self, rights: Rights, session: str | None = None) -> Workspace:
        """The caller's workspace; a session fixed by configuration wins over the request's."""
        return self.store.workspace(
            rights.namespace,
            session=rights.session or session,
            author_tier=rights.author_tier or self.author_tier,
            allow_write=rights.allow_write,
            allow_delete=rights.allow_delete,
            allow_global=rights.allow_global,
        )

    @contextmanager
    def read(self, rights: Rights, session: str | None = None) -> Iterator[Workspace]:
        with self._lock:
            yield self.workspace(rights, session)

    @contextmanager
    def write(self, rights: Rights, session: str | None = None) -> Iterator[Workspace]:
        # Also makes a write's check-then-write steps (is this key taken? what changed?)
        # one step as other requests see it.
        with self._lock:
            yield self.workspace(rights, session)
