"""PDF: the text of each page, with where each page starts so a hit can name its page.

pypdf (the ``pdf`` extra) extracts the text layer. The document text is the pages
joined by blank lines; ``metadata["page_starts"]`` holds the character offset where each
page begins, so :func:`page_at` and :func:`pages_of` turn a hit's chunk offsets into
page numbers. A PDF
without a text layer (a scan) is skipped with a message, not stored empty.
"""

from __future__ import annotations

import io
import logging
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from trove.errors import MissingDependency
from trove.ingest.readers.base import Corrupt, ReadOptions, Record, Unreadable

PAGE_BREAK = "\n\n"


def read_pdf(name: str, data: bytes, options: ReadOptions) -> list[Record]:
    try:
        import pypdf
    except ImportError as exc:
        raise MissingDependency("pypdf", "pdf", "reading PDF files") from exc
    # pypdf logs every quirk of real-world files; the run's report says what matters.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF (needs a password)")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many types for broken files
        raise Corrupt(f"corrupt PDF ({type(exc).__name__}: {exc})") from None
    if not any(page.strip() for page in pages):
        raise Unreadable("no text layer (a scanned PDF?); nothing to store")
    starts: list[int] = []
    position = 0
    for page in pages:
        starts.append(position)
        position += len(page) + len(PAGE_BREAK)
    fields: dict[str, Any] = {
        "text": PAGE_BREAK.join(pages),
        "title": _info(info, "title") or PurePosixPath(name).stem,
        "doc_type": "pdf",
        "metadata": {"pages": len(pages), "page_starts": starts},
    }
    author = _info(info, "author")
    if author:
        fields["author"] = author
    created = _created(info)
    if created is not None:
        fields["timestamp"] = created
    return [Record(fields)]


def page_at(metadata: Mapping[str, Any], offset: int) -> int | None:
    """The 1-based page of a PDF document that holds character ``offset``, or None for a
    document that is not a PDF."""
    starts: Sequence[int] | None = metadata.get("page_starts")
    if not starts:
        return None
    return max(1, bisect_right(starts, offset))


def pages_of(metadata: Mapping[str, Any], start: int, end: int) -> range | None:
    """The pages a span covers, e.g. a hit's ``chunk.start``/``chunk.end`` (a chunk may
    run over a page break), or None for a document that is not a PDF."""
    first, last = page_at(metadata, start), page_at(metadata, max(start, end - 1))
    if first is None or last is None:
        return None
    return range(first, last + 1)


def _info(info: Any, name: str) -> str:
    try:
        value = getattr(info, name, None) if info is not None else None
    except Exception:  # a malformed info dictionary must not lose the text
        return ""
    return str(value).strip() if value else ""


def _created(info: Any) -> datetime | None:
    try:
        value = info.creation_date if info is not None else None
    except Exception:
        return None
    return value if isinstance(value, datetime) else None
