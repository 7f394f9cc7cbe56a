"""The SQLite backend's one connection: opened and checked, shared by threads.

apsw does not queue threads on a busy connection: a second thread gets
ThreadingViolationError. A server's request threads, and a hybrid search that embeds the
query on a second thread, share one store, so every use of the connection goes through
:class:`SerializedConnection`'s lock and every result is read to the end before the lock
is released. :class:`Connected` is what every part of the backend stands on.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import apsw

from trove.errors import CorruptStore, NotATroveStore, StoreError
from trove.models import Document
from trove.search import deadline

if TYPE_CHECKING:
    from trove.backends.sqlite.index_changes import IndexChanges


class SerializedConnection:
    """The parts of :class:`apsw.Connection` trove uses, safe to call from any thread."""

    def __init__(self, conn: apsw.Connection, path: str = "", read_only: bool = False) -> None:
        self.raw = conn
        self.path = path
        # Opened read-only (the file or its folder is not writable): writes are refused
        # before SQLite is asked, and nothing is written beside the file.
        self.read_only = read_only
        # Reentrant: a transaction (backend.py) holds it while its thread runs statements.
        self.lock = threading.RLock()
        # Why the open transaction can only roll back (a batch's rows left unindexed:
        # bulk.py); None while it may commit.
        self.broken: BaseException | None = None

    def execute(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self.lock, self.damage():
            return rows_within_budget(self.raw, sql, params)

    def executemany(self, sql: str, rows: Any) -> None:
        with self.lock, self.damage():
            for _ in self.raw.executemany(sql, rows):
                pass

    @contextlib.contextmanager
    def damage(self) -> Iterator[None]:
        """A damaged page met by any statement (a search can reach one that opening did
        not) is a CorruptStore naming the file, not apsw's bare "disk image is malformed"."""
        try:
            yield
        except (apsw.CorruptError, apsw.NotADBError):
            raise CorruptStore(DAMAGED.format(path=self.path or ":memory:")) from None

    def changes(self) -> int:
        with self.lock:
            return int(self.raw.changes())

    def last_insert_rowid(self) -> int:
        with self.lock:
            return int(self.raw.last_insert_rowid())

    def close(self) -> None:
        with self.lock:
            self.raw.close()


# SQLite calls a statement's progress handler every this many steps of its program.
_PROGRESS_STEPS = 1000


def rows_within_budget(conn: apsw.Connection, sql: str, params: Any) -> list[tuple[Any, ...]]:
    """Every row of one statement; within a search, stopped (``QueryTimeout``) once the
    search's budget is spent (trove.search.deadline). The caller holds ``conn``."""
    if deadline.left() is None:  # not a search: nothing to stop
        return [tuple(row) for row in conn.execute(sql, params)]
    conn.set_progress_handler(deadline.expired, _PROGRESS_STEPS)
    try:
        return [tuple(row) for row in conn.execute(sql, params)]
    except apsw.InterruptError:
        raise deadline.error() from None
    except apsw.SQLError:
        # A virtual table interrupted mid-scan (sqlite-vec's vec0) reports a plain error.
        if deadline.expired():
            raise deadline.error() from None
        raise
    finally:
        conn.set_progress_handler(None)


class Connected:
    """What every part of the SQLite backend stands on: the connection, the backend's
    transaction, meta and one-row reads. The parts are mixed into :class:`SQLiteBackend`;
    what one part uses of another is declared here, once."""

    conn: SerializedConnection
    path: str
    memory: bool
    # What the open transaction changes of the in-memory indexes, told to them when it
    # commits (index_changes.py).
    _index_changes: IndexChanges

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        raise NotImplementedError

    def _tokenize(self, data: bytes, query: bool = False) -> list[tuple[int, int, str]]:
        raise NotImplementedError

    def get_meta(self, key: str, *, max_age: float = 0.0) -> str | None:
        # Always read: a local read costs less than keeping a copy (``max_age`` is for
        # backends whose reads are round trips).
        value = self._scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str | None) -> None:
        with self.transaction():
            if value is None:
                self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                self.conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )

    def _scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        row = self._one(sql, params)
        return None if row is None else row[0]

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        for row in self.conn.execute(sql, params):
            return tuple(row)
        return None


# What SQLite raises when the file cannot take a write: a full disk, a file size limit,
# a read-only file or mount.
UNWRITABLE = (apsw.FullError, apsw.IOError, apsw.ReadOnlyError)
DAMAGED = (
    "{path} is damaged (truncated or corrupt); `trove --db {path} check` lists what is "
    "wrong. trove does not repair stores: restore it from a backup, or `sqlite3 {path} "
    ".recover` a copy"
)
_SQLITE_MAGIC = b"SQLite format 3\x00"
# Page cache (SQLite's default is 2 MB). To read, 32 MB: each process that serves a store
# holds its own. A write transaction gets 256 MB, given back at its end: into a large store
# a batch dirties pages all over the file (five indexes have random keys: about six pages
# a document at 1M chunks), and a batch whose pages outgrow the cache spills them to the
# log mid-transaction and reads them back, writing some twice (5,000-document batches into
# 1M chunks: 36,280 pages spilled and 61,700 read with 32 MB; none and 40,795 with 256 MB).
READ_CACHE_KB = 32_000
WRITE_CACHE_KB = 256_000
# Folding the log into the file (fold_log) waits this long at most for other connections
# to finish reading an older snapshot (trove's reads take milliseconds); past it the log
# stays as it is until the next fold.
FOLD_WAIT_MS = 200
# A log that a checkpoint has emptied is cut back to this size when writing starts over at
# its head: without a limit it keeps the size of its largest burst of writes for good.
LOG_LIMIT_BYTES = 4 * 2**20
# A checkpoint every ~40 MB of log rather than SQLite's 4 MB: a batch write into a large
# store rewrites the same index pages commit after commit, and a checkpoint copies each page
# once however many commits wrote it (a fifth of such a commit).
CHECKPOINT_PAGES = 10_000
# While a bulk write runs (bulk.py's batches, until the backend folds the log at its end),
# every ~256 MB: into 1M chunks a batch of 1,000 documents logs ~5,400 pages (random keys:
# each document's rows land on their own pages of four indexes), so at 10,000 a checkpoint
# ran every other batch and copied pages that the next batches dirtied again (wall 3,300-
# 3,800 -> 4,500-4,900 chunks/s, docs/benchmarks.md "Bulk writes"). The log may grow to
# this size during a bulk write; the fold at its end empties it.
BULK_CHECKPOINT_PAGES = 65_536


def open_connection(
    path: str, busy_timeout_ms: int, version_of: Callable[[SerializedConnection, str], int]
) -> tuple[SerializedConnection, int]:
    """The connection to a store file (created if missing) and its schema version, as
    ``version_of`` reads it (and refuses what is not a trove store)."""
    memory = path == ":memory:"
    read_only = not memory and not writable(path)
    if not memory:
        check_is_sqlite(path)
    if not memory and not read_only:
        create_private(path)
    try:
        raw = apsw.Connection(*_arguments(path, read_only))
        raw.set_busy_timeout(busy_timeout_ms)
        conn = SerializedConnection(raw, path, read_only)
        version = version_of(conn, path)
    except apsw.NotADBError:
        raise NotATroveStore(f"{path} is not a SQLite database") from None
    except apsw.CorruptError:
        raise CorruptStore(DAMAGED.format(path=path)) from None
    except apsw.CantOpenError as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    if not memory and not read_only:
        use_wal(conn, path, busy_timeout_ms)
        conn.execute("PRAGMA synchronous = NORMAL")
        set_cache(conn, READ_CACHE_KB)
        checkpoint_every(conn, CHECKPOINT_PAGES)
        conn.execute(f"PRAGMA journal_size_limit = {LOG_LIMIT_BYTES}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn, version


def writable(path: str) -> bool:
    """Whether a store file can be written: the file, and its folder (where SQLite
    creates the -wal and -shm files) unless both of those exist writable already.

    ``os.access`` asks the kernel, so a read-only mount or an immutable file or folder
    counts as read-only for root too (file modes alone do not stop root)."""
    if not os.path.exists(path):
        return True  # to be created: making it says why not, if it cannot be
    if not os.access(path, os.W_OK):
        return False
    if os.access(os.path.dirname(path) or ".", os.W_OK):
        return True
    return all(os.access(f"{path}{tail}", os.W_OK) for tail in ("-wal", "-shm"))


def _arguments(path: str, read_only: bool) -> tuple[str, int]:
    """How apsw opens the file: as a read-only URI when it cannot be written.

    ``immutable=1`` reads the file alone, so SQLite creates no -wal or -shm beside it
    (which a read-only folder refuses, or which would litter a folder that is writable).
    A log still holding commits must be read with them: then ``mode=ro``, which needs the
    -shm file too."""
    if not read_only:
        return path, apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    wal = f"{path}-wal"
    logged = os.path.exists(wal) and os.path.getsize(wal) > 0
    # What a URI path must escape (urllib.parse is not imported here: cold start).
    escaped = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    uri = "file:" + escaped
    uri += "?mode=ro" if logged else "?immutable=1"
    return uri, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI


def cache_folder(path: str) -> str:
    """The folder beside a store file that holds its derived index caches (the vector
    index, the word postings): rebuildable, but disk the store takes all the same."""
    return f"{path}.trove-index"


def fold_log(conn: SerializedConnection, path: str, busy_timeout_ms: int) -> None:
    """Copy the write-ahead log into the file and empty it (a TRUNCATE checkpoint), so a
    store at rest is its file alone. Best effort: inside a transaction, on a read-only
    file, or while another connection still reads an older snapshot past FOLD_WAIT_MS,
    the log stays (a later fold, or the last connection's close, takes it in)."""
    try:
        if os.path.getsize(f"{path}-wal") == 0:
            return
    except OSError:  # no log (a memory store, a file not in WAL mode yet)
        return
    with conn.lock:
        if not conn.raw.getautocommit():
            return
        conn.raw.set_busy_timeout(FOLD_WAIT_MS)
        try:
            conn.raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except apsw.Error:
            pass
        finally:
            conn.raw.set_busy_timeout(busy_timeout_ms)


def checkpoint_every(conn: SerializedConnection, pages: int) -> None:
    """Checkpoint the log at the first commit that leaves it ``pages`` long or more."""
    conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")


def set_cache(conn: SerializedConnection, kib: int) -> None:
    """The connection's page cache: at most ``kib`` KiB, filled as pages are read."""
    conn.execute(f"PRAGMA cache_size = -{kib}")


def use_wal(conn: SerializedConnection, path: str, timeout_ms: int) -> None:
    """Put the file in WAL mode (a property of the file: whoever comes first sets it).

    Switching needs a lock SQLite does not wait for (the busy handler is not called),
    so a connection racing another's first migration retries until the busy timeout.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode")[0][0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except apsw.BusyError:
            if time.monotonic() > deadline:
                raise StoreError(f"{path} is locked by another process") from None
            time.sleep(0.005)


def create_private(path: str) -> None:
    """Create a new store file (and its folder) readable by its owner alone: stores hold
    people's mail and notes. SQLite gives the -wal and -shm files the file's mode.

    Paths are strings with os.path here, not pathlib: pathlib imports urllib.parse and
    ipaddress, about 5% of a `trove stats` that opens the store and counts."""
    folder = os.path.dirname(path)
    if folder and not os.path.exists(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def check_is_sqlite(path: str) -> None:
    if os.path.isdir(path):
        raise StoreError(f"{path} is a directory; give the path of a store file")
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path, "rb") as handle:
            header = handle.read(100)
        if header[: len(_SQLITE_MAGIC)] != _SQLITE_MAGIC:
            raise NotATroveStore(f"{path} is not a SQLite database (nor a trove store)")
        # The header's page count is valid when its change counter matches (offset 92):
        # a file shorter than it says was truncated (a copy cut short, a full disk). With a
        # write-ahead log, pages may still be on their way into the file (a checkpoint cut
        # short), and SQLite finishes the job from the log.
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(header[28:32], "big")
        wal = f"{path}-wal"
        logged = os.path.exists(wal) and os.path.getsize(wal) > 0
        short = header[24:28] == header[92:96] and os.path.getsize(path) < pages * page_size
        if short and not logged:
            raise CorruptStore(DAMAGED.format(path=path))
