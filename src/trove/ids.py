"""Stable document ids, derived from a document's natural key."""

from __future__ import annotations

import hashlib


def document_id(
    namespace: str,
    scope: str,
    source: str,
    source_id: str | None,
    dedupe_key: str | None,
    content_hash: str,
) -> str:
    """The stable id of a document, from its natural key.

    A dedupe key names the item within (namespace, scope); otherwise (source, source_id)
    does; with neither, the content itself does, so adding the same text twice is a no-op.
    """
    if dedupe_key is not None:
        key = ("key", namespace, scope, dedupe_key)
    elif source_id is not None:
        key = ("src", namespace, source, source_id)
    else:
        key = ("hash", namespace, source, content_hash)
    return hashlib.blake2b("\x00".join(key).encode(), digest_size=10).hexdigest()
