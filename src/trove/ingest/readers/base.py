"""What every reader shares: the records it yields, its errors, and text decoding.

A reader turns one file into records: one for most formats, one per message or line
for containers (mbox, JSONL). A record carries the fields of :meth:`Store.add` that the
format knows; the walk adds source, source_id and namespace.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import IO, Any, Protocol

from trove.errors import TroveError


class Unreadable(TroveError):
    """This file holds nothing to store as text (binary, bad encoding, no text layer).

    The walk reports it as *skipped*, names the file, and goes on.
    """


class Corrupt(Unreadable):
    """The file is of a known format but broken (a corrupt PDF, a malformed mbox).

    The walk reports it as *failed*, names the file, and goes on.
    """


@dataclass
class Record:
    """One document read from a file.

    ``key`` names it within a container file (its source_id is ``path#key``) and is
    None for a file that is one document. ``links`` are link targets as written
    (``[[Note]]`` or a relative path); the walk resolves them once the batch is stored.
    """

    fields: dict[str, Any]
    key: str | None = None
    links: tuple[str, ...] = ()
    # Caveats the ingest report carries (a body decoded with replacement characters).
    notes: tuple[str, ...] = ()
    # A mail attachment: the key of the record it came with ("" for the file's own).
    attachment_of: str | None = None
    # Bytes to keep as the document's original (when originals are kept): data, name, type.
    original: tuple[bytes, str, str] | None = None
    # The title is the record's own data (a JSON record's), not made from its file's name:
    # with no text, the record is still a document, found by its title.
    own_title: bool = False


@dataclass(frozen=True)
class RecordError:
    """One record of a container that could not be read (``where`` says which)."""

    where: str
    reason: str
    # A record that is simply not a document (no text field) is skipped, not failed.
    skipped: bool = False
    # False: reading the file again will not help (a corrupt attachment of a stored
    # mail), so the file is recorded as read and not retried on every run.
    retry: bool = True


@dataclass(frozen=True)
class ReadOptions:
    """Settings readers take from the caller: the field mapping for JSON records, and
    the largest single record a streamed container may hold."""

    fields: Mapping[str, str] = field(default_factory=dict)
    records: str | None = None
    max_record_bytes: int = 100 * 1024 * 1024


class WholeFileReader(Protocol):
    def __call__(
        self, name: str, data: bytes, options: ReadOptions
    ) -> Sequence[Record | RecordError]: ...


class StreamReader(Protocol):
    def __call__(
        self, name: str, stream: IO[bytes], options: ReadOptions
    ) -> Iterator[Record | RecordError]: ...


def decode_text(data: bytes) -> str:
    """UTF-8 text, or Unreadable: NUL bytes mean binary, and nothing is guessed."""
    if b"\x00" in data[:8192]:
        raise Unreadable("binary file (NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not valid UTF-8 (byte {exc.start})") from None


def jsonable(value: Any) -> Any:
    """``value`` with dates as ISO strings and anything else JSON cannot hold as text,
    so parsed front matter and records always fit in metadata."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def string_list(value: Any) -> list[str]:
    """Tags, authors, participants as given: a list, or one string (comma-separated)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple | set):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]
