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
    session: str = "",
) -> str:
    """The stable id of a document, from its natural key.

    A dedupe key names the item within (namespace, scope); otherwise (source, source_id)
    does; with neither, the content itself does, so adding the same text twice is a no-op.
    A session item is keyed within its session, and a global or session item apart from
    workspace items: the same key or text written elsewhere is another item, so a write
    can never take over an item of another scope, nor fail because another session holds
    that key (which would tell the writer so).
    """
    own = (session,) if scope == "session" else ()
    # Workspace items keep the ids they have always had (re-ingesting must find them).
    apart = () if scope == "workspace" else (scope, *own)
    if dedupe_key is not None:
        key = ("key", namespace, scope, dedupe_key, *own)
    elif source_id is not None:
        key = ("src", namespace, source, source_id, *apart)
    else:
        key = ("hash", namespace, source, content_hash, *apart)
    return hashlib.blake2b("\x00".join(key).encode(), digest_size=10).hexdigest()
