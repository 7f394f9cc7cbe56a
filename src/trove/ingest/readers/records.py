"""JSON and JSONL records (chat exports, other tools' dumps), with a field mapping.

Each record becomes one document with source_id ``path#id``: the value of the id field,
else a key made from the record's content (a hash, numbered when a record repeats), so
inserting a line does not re-label the records after it. The mapping names the record field
that fills each document field (``{"text": "body", "time": "sent_at"}``; dotted paths
reach nested values); unmapped fields are looked for under common names. Top-level
scalar fields that fill nothing else are kept in metadata.

A JSONL file is streamed line by line; a malformed line is reported with its number and
the others are stored. A JSON file is read whole: a list of records, or an object with
one list of records (or the list named by ``records``), or one record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from trove.errors import InvalidInput
from trove.ingest.readers.base import (
    Corrupt,
    ReadOptions,
    Record,
    RecordError,
    Unreadable,
    decode_text,
)
from trove.timeutil import to_epoch

# Document field -> record fields looked for when the caller maps nothing.
DEFAULTS: dict[str, tuple[str, ...]] = {
    "text": ("text", "content", "body", "message"),
    "id": ("id", "_id", "uuid"),
    "timestamp": ("timestamp", "time", "date", "created_at", "ts"),
    "title": ("title", "subject"),
    "author": ("author", "sender", "from", "user"),
    "participants": ("participants",),
    "thread_id": ("thread_id", "thread", "conversation_id"),
    "channel": ("channel",),
    "url": ("url",),
    "tags": ("tags",),
    "doc_type": ("type",),
}
# Names the caller may use for a mapping (the CLI's --time-field is "time").
ALIASES = {"time": "timestamp", "thread": "thread_id", "type": "doc_type"}
_STRINGS = ("title", "author", "thread_id", "channel", "url", "doc_type")
_LISTS = ("participants", "tags")


def field_map(mapping: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The record fields to look for, per document field; raises InvalidInput for a
    mapping of a field that documents do not have."""
    paths = dict(DEFAULTS)
    for name, path in mapping.items():
        target = ALIASES.get(name, name)
        if target not in DEFAULTS:
            known = ", ".join(sorted({*DEFAULTS, *ALIASES}))
            raise InvalidInput(f"cannot map a record field to {name!r}; map one of: {known}")
        paths[target] = (path,)
    return paths


def read_jsonl(
    name: str, stream: IO[bytes], options: ReadOptions
) -> Iterator[Record | RecordError]:
    paths = field_map(options.fields)
    keys = ContentKeys()
    for number, line in _lines(stream, options.max_record_bytes):
        where = f"line {number}"
        if line is None:
            yield RecordError(where, f"longer than {options.max_record_bytes} bytes", skipped=True)
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(decode_text(line.removeprefix(b"\xef\xbb\xbf")))
        except ValueError as exc:
            yield RecordError(where, f"not valid JSON: {exc}")
            continue
        except Unreadable as exc:  # NUL bytes or bad UTF-8 on this line
            yield RecordError(where, str(exc))
            continue
        except RecursionError:  # one bad line must not stop the file, nor the folder
            yield RecordError(where, "JSON nested too deeply to read")
            continue
        yield record(value, paths, keys, where)


def read_json(name: str, data: bytes, options: ReadOptions) -> list[Record | RecordError]:
    paths = field_map(options.fields)
    try:
        document = json.loads(decode_text(data.removeprefix(b"\xef\xbb\xbf")))
    except ValueError as exc:
        raise Corrupt(f"not valid JSON: {exc}") from None
    items = _records_of(document, paths, options.records)
    keys = ContentKeys()
    return [record(value, paths, keys, f"record {i}") for i, value in enumerate(items, 1)]


def _records_of(
    document: Any, paths: dict[str, tuple[str, ...]], records: str | None
) -> Iterable[Any]:
    if records:
        found = lookup(document, records)
        if not isinstance(found, list):
            raise Corrupt(f"no list of records at {records!r}")
        return found
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and _first(document, paths["text"]) is None:
        lists = [v for v in document.values() if isinstance(v, list) and v]
        if len(lists) == 1 and all(isinstance(v, dict) for v in lists[0]):
            return lists[0]  # {"messages": [...]}: the one list is the records
    return [document]


class ContentKeys:
    """Keys for the records of one file that have no id: a hash of the record, numbered
    from the second time the same record appears in the file."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, value: Any) -> str:
        canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()[:16]
        times = self.seen[digest] = self.seen.get(digest, 0) + 1
        return digest if times == 1 else f"{digest}-{times}"


def keyed_hash(
    digest: str, format_name: str, fields: Mapping[str, str], records: str | None
) -> str:
    """The hash recorded for a records file: it covers the field mapping the file was
    read with, so reading it again with another mapping is not "unchanged"."""
    if format_name not in ("json", "jsonl") or not (fields or records):
        return digest  # the default mapping: the file's own hash, as before
    mapping = json.dumps([sorted(fields.items()), records], ensure_ascii=False)
    return hashlib.sha256(f"{digest}\0{mapping}".encode()).hexdigest()


def record(
    value: Any, paths: dict[str, tuple[str, ...]], keys: ContentKeys, where: str
) -> Record | RecordError:
    """One document from one record, or why it is not one."""
    if not isinstance(value, dict):
        return RecordError(where, f"not a JSON object but {type(value).__name__}")
    text = _text(_first(value, paths["text"]))
    if text is None:
        wanted = " or ".join(repr(p) for p in paths["text"])
        return RecordError(where, f"no text field ({wanted})", skipped=True)
    fields: dict[str, Any] = {"text": text, "doc_type": "record"}
    used = {p.split(".", 1)[0] for name in ("text", "id") for p in paths[name] if p in value}
    for name in _STRINGS + _LISTS + ("timestamp",):
        path = next((p for p in paths[name] if lookup(value, p) is not None), None)
        if path is None:
            continue
        found = lookup(value, path)
        if name == "timestamp":
            moment = _time(found)
            if moment is None:
                return RecordError(where, f"{path}: {found!r} is not a time")
            fields[name] = moment
        elif name in _LISTS:
            fields[name] = _strings(found)
        elif isinstance(found, str | int | float) and not isinstance(found, bool):
            fields[name] = str(found)
        else:
            continue
        used.add(path.split(".", 1)[0])
    metadata = {k: v for k, v in value.items() if k not in used and _scalar_or_list(v)}
    if metadata:
        fields["metadata"] = metadata
    key = _first(value, paths["id"])
    has_key = isinstance(key, str | int) and not isinstance(key, bool) and str(key).strip()
    return Record(fields, key=str(key).strip() if has_key else keys(value), own_title=True)


def lookup(value: Any, path: str) -> Any:
    """``value["a"]["b"]`` for path ``a.b`` (a key that itself holds a dot wins)."""
    if isinstance(value, dict) and path in value:
        return value[path]
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _first(value: Any, paths: Iterable[str]) -> Any:
    for path in paths:
        found = lookup(value, path)
        if found is not None:
            return found
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)  # message parts
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _time(value: Any) -> float | str | None:
    """Epoch seconds, milliseconds or microseconds (told apart by size), or ISO text."""
    if isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        value = float(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        while abs(number) > 1e11:  # no one exports dates after the year 5138 in seconds
            number /= 1000
        return number
    if isinstance(value, str):
        try:
            to_epoch(value)
        except InvalidInput:
            return None
        return value
    return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float) and str(v).strip()]
    return []


def _scalar_or_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(v is None or isinstance(v, str | int | float | bool) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _lines(stream: IO[bytes], limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Numbered lines; a line longer than ``limit`` is None and never held whole."""
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(1 << 20)
            yield number, None
            continue
        yield number, line
