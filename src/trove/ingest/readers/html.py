"""HTML: the main text of a page, without navigation, scripts and boilerplate.

trafilatura (the ``html`` extra) finds the main content and the page's metadata (title,
canonical url, author, date). A page with no text of its own (only scripts) is skipped.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from typing import Any

from trove.errors import InvalidInput, MissingDependency
from trove.ingest.readers.base import ReadOptions, Record, Unreadable
from trove.timeutil import to_epoch

# Elements whose text is never the page's content; trafilatura keeps <noscript>.
_NEVER_CONTENT = ("script", "style", "noscript", "template")


def read_html(name: str, data: bytes, options: ReadOptions) -> list[Record]:
    try:
        import trafilatura
        from trafilatura.utils import load_html
    except ImportError as exc:
        raise MissingDependency("trafilatura", "html", "reading HTML files") from exc
    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    if not data.strip():
        raise Unreadable("empty HTML file")
    tree = load_html(data)
    if tree is None:
        raise Unreadable("not an HTML document")
    for element in tree.xpath("|".join(f"//{tag}" for tag in _NEVER_CONTENT)):
        element.drop_tree()
    meta = trafilatura.extract_metadata(tree, extensive=False)
    text = trafilatura.extract(
        tree,
        favor_recall=True,
        include_comments=False,
        include_tables=True,
        with_metadata=False,
        deduplicate=False,
    )
    if not text or not text.strip():
        raise Unreadable("no text (only scripts or markup)")
    fields: dict[str, Any] = {
        "text": text,
        "title": (meta.title if meta and meta.title else "") or PurePosixPath(name).stem,
        "doc_type": "html",
    }
    if meta is not None:
        if meta.url:
            fields["url"] = meta.url
        if meta.author:
            fields["author"] = meta.author
        if meta.date and _is_time(meta.date):
            fields["timestamp"] = meta.date
        tags = [*(meta.categories or []), *(meta.tags or [])]
        if tags:
            fields["tags"] = tags
        extra = {"description": meta.description, "sitename": meta.sitename}
        metadata = {k: v for k, v in extra.items() if v}
        if metadata:
            fields["metadata"] = metadata
    return [Record(fields)]


def _is_time(value: str) -> bool:
    try:
        return to_epoch(value) is not None
    except InvalidInput:
        return False
