"""``trove backup``: a consistent copy of a SQLite store while other processes write.

SQLite's online backup API copies the file page by page inside one read transaction of
the source; the store runs in WAL mode, so writers go on meanwhile and the copy is the
store as it was when the backup began. The copy is itself a store: restore by copying it
back over the original (with no process using it) or by opening it where it is.
"""

from __future__ import annotations

import os
from pathlib import Path

import apsw

from trove.errors import InvalidInput, NotFound, StoreError
from trove.opening import is_postgres


def backup(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> int:
    """Copy the SQLite store at ``source`` to ``dest`` (which must not exist); returns the
    number of pages copied."""
    src, dst = os.fspath(source), Path(dest)
    if is_postgres(src):
        raise InvalidInput("trove backup copies a SQLite store; back PostgreSQL up with pg_dump")
    if src == ":memory:" or not Path(src).is_file():
        raise NotFound(f"{src} is not a store file")
    if dst.exists():
        raise InvalidInput(f"{dst} exists; back up to a new file")
    if Path(src).resolve() == dst.resolve():
        raise InvalidInput("source and destination are the same file")
    if not dst.parent.is_dir():
        raise InvalidInput(f"cannot back up to {dst}: the folder {dst.parent} does not exist")
    partial = dst.with_name(dst.name + ".partial")
    try:
        pages = _copy(src, partial)
    except apsw.Error as exc:
        for leftover in (partial, partial.with_name(partial.name + "-journal")):
            leftover.unlink(missing_ok=True)
        raise StoreError(f"backup of {src} to {dst} failed: {exc}") from None
    # Renamed into place only when complete: a DEST that exists is a whole copy.
    partial.replace(dst)
    return pages


def _copy(src: str, partial: Path) -> int:
    """The pages of ``src`` copied into the new file ``partial``; its count of pages."""
    reader = apsw.Connection(src, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        writer = apsw.Connection(os.fspath(partial))
    except apsw.Error:
        reader.close()
        raise
    try:
        with writer.backup("main", reader, "main") as job:
            # One step for every page: a single read transaction, so one consistent
            # snapshot however busy the writers are (a step at a time would restart
            # each time another connection commits).
            while not job.done:
                job.step(-1)
            pages = int(job.page_count)
    except (apsw.FullError, apsw.IOError) as exc:
        # A failed backup step leaves no message on either connection (apsw says "not an
        # error"); the writer's last OS error says why: no space left, a file too large.
        errno = writer.system_errno
        reason = os.strerror(errno) if errno else f"{type(exc).__name__} (is the disk full?)"
        raise type(exc)(f"cannot write {partial}: {reason}") from None
    finally:
        writer.close()
        reader.close()
    return pages
