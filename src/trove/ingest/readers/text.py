"""Plain text: the file's text exactly, titled by its name."""

from __future__ import annotations

from pathlib import PurePosixPath

from trove.ingest.readers.base import ReadOptions, Record, decode_text


def read_text(name: str, data: bytes, options: ReadOptions) -> list[Record]:
    text = decode_text(data)
    return [Record({"text": text, "title": PurePosixPath(name).stem, "doc_type": "text"})]
