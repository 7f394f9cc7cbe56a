"""Connections of the PostgreSQL backend: a pool, this thread's transaction, errors that
name the server (never the password), and the one place NUL is handled.

PostgreSQL text cannot hold NUL, which trove must store byte for byte. Every ``str``
parameter is escaped on its way to the server, and every text value unescaped on its
way back, by a dumper and loaders registered on each connection (see
:func:`trove.backends.postgres.text.esc`): no query does it by hand.
"""

from __future__ import annotations

import contextlib
import re
import select
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg import sql
from psycopg.abc import Buffer
from psycopg.types.string import (
    StrBinaryDumper,
    StrDumper,
    StrDumperUnknown,
    TextBinaryLoader,
    TextLoader,
)
from psycopg_pool import ConnectionPool, PoolTimeout

from trove.backends.postgres.replicas import WRITTEN_LSN, Replicas
from trove.backends.postgres.text import esc, unesc
from trove.backends.postgres.url import PostgresTarget
from trove.errors import StoreError
from trove.models import Document
from trove.search import deadline

if TYPE_CHECKING:
    from trove.hits import HitDetails
    from trove.search.query import ParsedQuery

_LOST = "lost the connection to"
# A pooled connection idle longer than this is checked with a round trip on checkout; a
# fresher one only when its socket has something to read (see Connected.check).
_IDLE_CHECK_S = 5.0
T = TypeVar("T")


class Connected:
    """What every part of the PostgreSQL backend stands on: the pool, this thread's
    transaction, one-statement reads, meta. The parts are mixed into
    :class:`PostgresBackend`; what one part uses of another is declared here, once."""

    target: PostgresTarget
    schema: str
    where: str
    pool: ConnectionPool
    vector_info: Any
    _local: threading.local
    _search_path: list[str]
    # Standbys that serve reads outside a write (trove.backends.postgres.replicas).
    replicas: Replicas | None = None
    # (when, chunks, mean word count, mean gram count): the corpus figures BM25 uses.
    _stats_cache: tuple[float, int, float, float] | None = None
    # (when, value) of each meta key this handle read (get_meta), forgotten at each write.
    _meta_kept: dict[str, tuple[float, str | None]]

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        raise NotImplementedError

    def hit_details(
        self, query: ParsedQuery, hits: Sequence[tuple[str, int]], chars: int
    ) -> HitDetails:
        raise NotImplementedError

    def details_of(
        self, query: ParsedQuery, rows: Sequence[Sequence[Any]], hits: Sequence[tuple[str, int]]
    ) -> HitDetails:
        raise NotImplementedError

    def _timeout(self) -> float:
        match = re.search(r"connect_timeout=(\d+)", self.target.conninfo)
        return float(match.group(1)) if match else 10.0

    @contextlib.contextmanager
    def _direct(self) -> Iterator[psycopg.Connection]:
        conn = psycopg.connect(self.target.conninfo, autocommit=True)
        escape_nul(conn)
        try:
            yield conn
        finally:
            conn.close()

    def _set_path(self, conn: psycopg.Connection) -> None:
        conn.execute(
            sql.SQL("SET search_path TO {}").format(
                sql.SQL(", ").join(sql.Identifier(s) for s in self._search_path)
            )
        )

    def _configure(self, conn: psycopg.Connection) -> None:
        escape_nul(conn)
        self._set_path(conn)
        register_vector_info(conn, self.vector_info)

    @staticmethod
    def check(conn: psycopg.Connection) -> None:
        """The pool's test of a connection it hands out (it discards one that fails).

        A round trip (an empty query) only when the connection has been idle a while or
        its socket is readable: a server that restarts or ends the session sends a
        message and closes it, which makes the idle socket readable. A search checks out
        a connection per statement, so testing each with a round trip doubled them."""
        idle = time.monotonic() - getattr(conn, "_trove_returned", 0.0)
        if idle > _IDLE_CHECK_S or conn.closed or _readable(conn):
            ConnectionPool.check_connection(conn)

    @staticmethod
    def returned(conn: psycopg.Connection) -> None:
        """The pool's reset hook: when the connection came back (see :meth:`check`)."""
        conn._trove_returned = time.monotonic()  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def _errors(self, doing: str = _LOST) -> Iterator[None]:
        """Driver errors that are the server's or the network's become a StoreError that
        names the server (never the password); bugs stay what they are."""
        try:
            yield
        except psycopg.errors.QueryCanceled:
            raise  # a statement's time budget ran out: the caller says which
        except psycopg.errors.TransactionRollback as exc:
            raise StoreError(
                f"a concurrent write to PostgreSQL at {self.where} conflicted with this one; "
                f"nothing of it was written, retry ({self._reason(exc)})"
            ) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            message = f"{doing} PostgreSQL at {self.where}: {self._reason(exc)}"
            if doing == _LOST:
                message += "; nothing of an unfinished write was kept"
            raise StoreError(message) from None
        except PoolTimeout:
            raise StoreError(
                f"no connection to PostgreSQL at {self.where} became free in time"
            ) from None

    def _reason(self, exc: BaseException) -> str:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return self.target.scrub(first)

    @contextlib.contextmanager
    def conn(self) -> Iterator[psycopg.Connection]:
        """This thread's transaction connection, or a pooled one for one statement."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._errors(), self.pool.connection() as conn:
            yield conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; nests (inner blocks join the outer transaction)."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._errors(), self.pool.connection() as conn:
            try:
                with conn.transaction():
                    self._local.conn = conn
                    try:
                        yield
                    finally:
                        self._local.conn = None
            finally:  # committed (or not): meta values read before may be stale
                self._meta_kept.clear()
            if self.replicas is not None:  # committed: reads wait for standbys to replay it
                self._note_write(self.replicas, conn)

    def _note_write(self, replicas: Replicas, conn: psycopg.Connection) -> None:
        """Read the position after the commit. If the primary is lost at that instant the
        write still stands (it committed): only its position is not known, and a standby
        may answer reads without it until it replays it."""
        with contextlib.suppress(psycopg.Error):
            replicas.wrote(self._wal_position(conn))

    def _wal_position(self, conn: psycopg.Connection) -> int:
        row = conn.execute(WRITTEN_LSN).fetchone()
        return int(row[0]) if row else 0

    def _read(self, run: Callable[[psycopg.Connection], T]) -> T:
        """One read: in this thread's write if there is one, else on a standby that has
        replayed this handle's writes, else on the primary."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            return run(held)
        if self.replicas is not None:
            served, value = self.replicas.read(run)
            if served:
                return value  # type: ignore[return-value]
        with self._errors(), self.pool.connection() as conn:
            return run(conn)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that all see one state of the store (an export): this thread's reads run
        in one REPEATABLE READ, READ ONLY transaction. Inside a write, the write's own."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._errors(), self.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def read_with(
        self, settings: Mapping[str, str], query: Any, params: Any = ()
    ) -> list[tuple[Any, ...]]:
        """Rows of one read under transaction-local settings (``set_config``), in one
        round trip: the settings and the query go down one pipeline with no BEGIN or
        COMMIT. Statements before the pipeline's one Sync run in one implicit transaction,
        so the settings hold for the query and end with it; psycopg's BEGIN and COMMIT
        around them cost a k-NN 0.6 ms of its 3.4 (load 0.3). Within a search, its
        timeout is what is left of the search's budget (QueryTimeout past it:
        trove.search.deadline)."""
        settings = {**settings, **_budget()}
        if not settings:
            return self.rows(query, params)
        names = ", ".join(["set_config(%s, %s, true)"] * len(settings))
        values = [x for item in settings.items() for x in item]
        held = getattr(self._local, "conn", None)

        def run(conn: psycopg.Connection) -> list[tuple[Any, ...]]:
            if conn is held:  # inside a write: its transaction, settings until it ends
                conn.execute(f"SELECT {names}", values)
                return list(conn.execute(query, params).fetchall())
            with conn.pipeline():
                conn.execute(f"SELECT {names}", values)
                cur = conn.execute(query, params)
            return list(cur.fetchall())

        try:
            return self._read(run)
        except psycopg.errors.QueryCanceled:
            raise deadline.error() from None

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        return self._read(lambda conn: list(conn.execute(query, params).fetchall()))

    def one(self, query: Any, params: Any = ()) -> tuple[Any, ...] | None:
        row = self._read(lambda conn: conn.execute(query, params).fetchone())
        return None if row is None else tuple(row)

    def _written(self) -> None:
        """Chunks changed: the corpus figures BM25 uses are recomputed on the next search."""
        self._stats_cache = None

    def get_meta(self, key: str, *, max_age: float = 0.0) -> str | None:
        """A meta value; with ``max_age``, the one this handle read within that many
        seconds, if it did (a round trip less). Inside a write, always its own reading;
        after this handle's writes, read again (:meth:`transaction` forgets them)."""
        writing = getattr(self._local, "conn", None) is not None  # uncommitted: not kept
        seen = None if writing else self._meta_kept.get(key)
        if seen is not None and time.monotonic() - seen[0] < max_age:
            return seen[1]
        row = self.one("SELECT value FROM meta WHERE key = %s", (key,))
        value = None if row is None else str(row[0])
        if not writing:
            self._meta_kept[key] = (time.monotonic(), value)
        return value

    def set_meta(self, key: str, value: str | None) -> None:
        with self.transaction(), self.conn() as conn:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key = %s", (key,))
            else:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )


def _budget() -> dict[str, str]:
    """The statement timeout of a search's statement: what is left of its budget."""
    left = deadline.left()
    if left is None:
        return {}
    if left <= 0:
        raise deadline.error()
    return {"statement_timeout": str(max(1, int(left * 1000)))}


def _readable(conn: psycopg.Connection) -> bool:
    """Whether an idle connection's socket has data or an end of file waiting."""
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(ready)


def escape_nul(conn: psycopg.Connection) -> None:
    """Make ``conn`` escape every ``str`` it sends and unescape every text it reads, so
    text with NUL is stored and read back exactly (psycopg's own adapters, subclassed)."""
    # As psycopg registers them: the last one registered is the default for ``%s``.
    for dumper in (_EscapedBinary, _Escaped, _EscapedUnknown):
        conn.adapters.register_dumper(str, dumper)
    for name in ("text", "varchar"):
        conn.adapters.register_loader(name, _Unescaped)
        conn.adapters.register_loader(name, _UnescapedBinary)


class _EscapedBinary(StrBinaryDumper):
    def dump(self, obj: str) -> Buffer | None:
        return super().dump(esc(obj))


class _Escaped(StrDumper):
    def dump(self, obj: str) -> Buffer | None:
        return super().dump(esc(obj))


class _EscapedUnknown(StrDumperUnknown):
    def dump(self, obj: str) -> Buffer | None:
        return super().dump(esc(obj))


class _Unescaped(TextLoader):
    def load(self, data: Buffer) -> bytes | str:
        value = super().load(data)
        return unesc(value) if isinstance(value, str) else value


class _UnescapedBinary(TextBinaryLoader):
    def load(self, data: Buffer) -> bytes | str:
        value = super().load(data)
        return unesc(value) if isinstance(value, str) else value
