"""Markdown: the file's text exactly, with its YAML front matter and links as provenance.

The document text is the whole file, front matter included, so ``get`` returns the file
byte for byte, its content hash is the file's hash (an unchanged file costs one hash),
and chunk offsets are file offsets.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from trove.errors import InvalidInput
from trove.ingest.readers.base import ReadOptions, Record, decode_text, jsonable, string_list
from trove.timeutil import to_epoch

_FRONT_MATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(?P<body>(?:.*\r?\n)*?)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)"
)
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_WIKI = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+[\"'(][^\n]*?[\"')])?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Front matter keys that fill document fields; every other key goes to metadata.
_TITLE = ("title",)
_TAGS = ("tags", "tag", "keywords")
_AUTHOR = ("author", "authors")
_DATE = ("date", "created", "published")


def read_markdown(name: str, data: bytes, options: ReadOptions) -> list[Record]:
    text = decode_text(data)
    fields: dict[str, Any] = {"text": text, "doc_type": "markdown"}
    metadata: dict[str, Any] = {}
    body = text
    found = _FRONT_MATTER.match(text)
    if found:
        body = text[found.end() :]
        _apply_front_matter(found.group("body"), fields, metadata)
    if not fields.get("title"):
        heading = _H1.search(body)
        fields["title"] = heading.group(1).strip() if heading else PurePosixPath(name).stem
    links = extract_links(body)
    if links:
        metadata["links"] = list(links)
    if metadata:
        fields["metadata"] = metadata
    return [Record(fields, links=links)]


def _apply_front_matter(source: str, fields: dict[str, Any], metadata: dict[str, Any]) -> None:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        return
    # libyaml's loader when PyYAML was built with it: much faster per note.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(source, Loader=loader)
    except yaml.YAMLError as exc:
        # A broken header must not lose the note: store it, and say why it has no fields.
        metadata["front_matter_error"] = str(exc).splitlines()[0]
        return
    if not isinstance(data, dict):
        return
    data = {str(k).lower(): v for k, v in data.items()}
    for key in _TITLE:
        if isinstance(data.get(key), str | int | float) and str(data[key]).strip():
            fields["title"] = str(data.pop(key)).strip()
            break
    for key in _TAGS:
        if key in data:
            fields["tags"] = [t.lstrip("#") for t in string_list(data.pop(key))]
            break
    for key in _AUTHOR:
        if key in data:
            authors = string_list(data.pop(key))
            if authors:
                fields["author"] = authors[0]
                if len(authors) > 1:
                    fields["participants"] = authors
            break
    for key in _DATE:
        if key in data and _is_time(data[key]):
            fields["timestamp"] = jsonable(data.pop(key))
            break
    metadata.update(jsonable(data))


def _is_time(value: Any) -> bool:
    """A date the store can take; anything else stays in metadata as written (a bare
    number is a year or a count more often than epoch seconds)."""
    if not isinstance(value, str | date):
        return False
    try:
        return to_epoch(jsonable(value)) is not None
    except InvalidInput:
        return False


def extract_links(body: str) -> tuple[str, ...]:
    """Link targets, in order, each once: ``[[Note]]`` for wiki links, a relative path
    for Markdown links. Links inside fenced code and to URLs are not links between notes."""
    prose = _FENCE.sub("", body)
    found: dict[str, None] = {}
    for match in _WIKI.finditer(prose):
        target = match.group(1).strip()
        if target:
            found[f"[[{target}]]"] = None
    for match in _LINK.finditer(prose):
        target = match.group(1).strip("<>").split("#", 1)[0].split("?", 1)[0]
        if target and not _SCHEME.match(target):
            found[unquote(target)] = None
    return tuple(found)
