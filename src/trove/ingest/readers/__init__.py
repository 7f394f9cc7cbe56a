"""Readers, one per format, registered by file suffix.

A format reads a whole file (``read``) or streams a large one record by record
(``stream``: mbox, JSONL, whose size is not limited by ``max_bytes``). Formats whose
document text is the file itself (``verbatim``) are checked for change by the content
hash the store already keeps; the others by a hash of the file the walk records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePath

from trove.ingest.readers.base import (
    Corrupt,
    ReadOptions,
    Record,
    RecordError,
    StreamReader,
    Unreadable,
    WholeFileReader,
    decode_text,
)
from trove.ingest.readers.html import read_html
from trove.ingest.readers.mail import read_eml, read_mbox
from trove.ingest.readers.markdown import read_markdown
from trove.ingest.readers.pdf import page_at, pages_of, read_pdf
from trove.ingest.readers.records import read_json, read_jsonl
from trove.ingest.readers.text import read_text


@dataclass(frozen=True)
class Format:
    """How to read one kind of file."""

    name: str
    suffixes: tuple[str, ...]
    read: WholeFileReader | None = None
    stream: StreamReader | None = None
    # Many documents per file, each with source_id "path#key".
    container: bool = False
    # The document text is the file's text, so its content hash is the file's hash.
    verbatim: bool = False
    # Parsing costs far more than reading: worth a worker process when there are many.
    heavy: bool = False
    # Its keyed documents keep bytes of their own as originals (a message, an attachment).
    record_originals: bool = False


FORMATS = (
    Format("markdown", (".md", ".markdown"), read=read_markdown, verbatim=True),
    Format("text", (".txt", ".text"), read=read_text, verbatim=True),
    Format("html", (".html", ".htm", ".xhtml"), read=read_html, heavy=True),
    Format("pdf", (".pdf",), read=read_pdf, heavy=True),
    Format("email", (".eml",), read=read_eml, heavy=True, record_originals=True),
    Format("mbox", (".mbox",), stream=read_mbox, container=True, record_originals=True),
    Format("jsonl", (".jsonl", ".ndjson"), stream=read_jsonl, container=True),
    Format("json", (".json",), read=read_json, container=True),
)
BY_NAME = {f.name: f for f in FORMATS}
BY_SUFFIX = {suffix: f for f in FORMATS for suffix in f.suffixes}
# An .eml file's attachments are documents "a.eml#attachment-N" of that file.
CONTAINER_SUFFIXES = (*(s for f in FORMATS if f.container for s in f.suffixes), ".eml")


def format_for(path: str | PurePath) -> Format | None:
    """The format of a file, by its suffix (case-insensitive), or None if unknown."""
    # os.path, not PurePath: this runs once per file of every run, unchanged ones too.
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    return BY_SUFFIX.get(suffix)


def split_source_id(source_id: str) -> tuple[str, str | None]:
    """``(path, key)`` of a record's source_id ``path#key``; ``(path, None)`` for a file
    that is one document. A '#' counts only after a container's suffix, so a note named
    ``C# tips.md`` is still one path."""
    start = 0
    while True:
        at = source_id.find("#", start)
        if at == -1:
            return source_id, None
        if source_id[:at].lower().endswith(CONTAINER_SUFFIXES):
            return source_id[:at], source_id[at + 1 :]
        start = at + 1


__all__ = [
    "BY_NAME",
    "FORMATS",
    "Corrupt",
    "Format",
    "ReadOptions",
    "Record",
    "RecordError",
    "StreamReader",
    "Unreadable",
    "WholeFileReader",
    "decode_text",
    "format_for",
    "page_at",
    "pages_of",
    "split_source_id",
]
