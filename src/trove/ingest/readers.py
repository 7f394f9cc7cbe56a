"""Readers turn a file's bytes into documents with the provenance the format carries.

One function per format, registered by suffix. A reader raises :class:`Unreadable`
for a file it cannot use (binary, bad encoding); the walk reports it and goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import TroveError


class Unreadable(TroveError):
    """This file cannot be stored as text (binary, bad encoding, corrupt)."""


Reader = Callable[[Path, bytes], dict[str, Any]]

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text, or Unreadable: NUL bytes mean binary, and nothing is guessed."""
    if b"\x00" in data[:8192]:
        raise Unreadable(f"{path}: binary file (NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path}: not valid UTF-8 (byte {exc.start})") from None


def read_text(path: Path, data: bytes) -> dict[str, Any]:
    return {"text": decode_text(path, data), "title": path.stem, "doc_type": "text"}


def read_markdown(path: Path, data: bytes) -> dict[str, Any]:
    text = decode_text(path, data)
    heading = _H1.search(text)
    title = heading.group(1).strip() if heading else path.stem
    return {"text": text, "title": title, "doc_type": "markdown"}


READERS: dict[str, Reader] = {
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".txt": read_text,
    ".text": read_text,
}
