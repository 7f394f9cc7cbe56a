"""What an ingest recorded of each file it stored, as a backend keeps it (one row of
``file_stat``). Apart from :mod:`trove.backends.base`, which names these only in
signatures: opening a store makes neither dataclass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FileStat:
    """What an ingest saw of a file it stored: its size and times, and the hash of what it
    read. A file that still has this size and these times still has this hash."""

    size: int
    mtime_ns: int
    ctime_ns: int
    content_hash: str


@dataclass(frozen=True)
class FileState:
    """What an ingest recorded of one file it stored (one row of ``file_stat``).

    ``stat``: its size and times with the hash of what was read, None when the file was
    modified too recently to trust them. ``file_hash``: for a format whose text is
    derived (HTML, PDF, mail, records), the hash it was last fully stored from, keyed
    with the field mapping it was read with; None for Markdown and text, whose
    document's own content hash says as much."""

    stat: FileStat | None = None
    file_hash: str | None = None

    @classmethod
    def from_columns(cls, columns: Sequence[Any]) -> FileState:
        """From (size, mtime_ns, ctime_ns, content_hash, file_hash), as stored."""
        size, mtime_ns, ctime_ns, content_hash, file_hash = columns
        stat = None
        if size is not None:
            stat = FileStat(int(size), int(mtime_ns), int(ctime_ns), str(content_hash))
        return cls(stat, None if file_hash is None else str(file_hash))

    def columns(self) -> tuple[Any, ...]:
        """(size, mtime_ns, ctime_ns, content_hash, file_hash), as stored."""
        st = self.stat
        if st is None:
            return None, None, None, None, self.file_hash
        return st.size, st.mtime_ns, st.ctime_ns, st.content_hash, self.file_hash
