"""An original's download headers, the same for the API (``GET /v1/items/{id}/original``)
and the web page: an attachment, never inline, with ``nosniff``."""

from __future__ import annotations

from urllib.parse import quote

from trove.originals import OriginalInfo


def headers(info: OriginalInfo) -> dict[str, str]:
    name = info.name or f"{info.doc_id}"
    fallback = name.encode("ascii", "replace").decode().replace('"', "_").replace("?", "_")
    return {
        "Content-Disposition": (
            f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
        ),
        "Content-Length": str(info.size),
        "X-Content-Type-Options": "nosniff",
    }
