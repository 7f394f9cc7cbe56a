"""An original's download headers, the same for the API (``GET /v1/items/{id}/original``)
and the web page: an attachment, never inline, with ``nosniff``."""

from __future__ import annotations

import re
from urllib.parse import quote

from trove.originals import FALLBACK_TYPE, OriginalInfo, is_media_type

# What may stand in the quoted ASCII file name (RFC 6266); the exact name is filename*.
_NOT_PLAIN = re.compile(r"[^ !#-\[\]-~]|[?]")


def media_type(info: OriginalInfo) -> str:
    """The stored media type when it is a valid header value (a store written before
    they were checked may hold any), else ``application/octet-stream``."""
    return info.media_type if is_media_type(info.media_type) else FALLBACK_TYPE


def headers(info: OriginalInfo) -> dict[str, str]:
    name = info.name or f"{info.doc_id}"
    fallback = _NOT_PLAIN.sub("_", name)
    return {
        "Content-Disposition": (
            f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
        ),
        "Content-Length": str(info.size),
        "X-Content-Type-Options": "nosniff",
    }
