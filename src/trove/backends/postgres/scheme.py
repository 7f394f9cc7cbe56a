"""Whether a target names PostgreSQL, and how it may be shown (the password hidden).

Every command that opens a store asks both; this module holds no dataclass, so asking
costs no more than the check (the target's full parsing is trove.backends.postgres.url).
"""

from __future__ import annotations

SCHEMES = ("postgresql://", "postgres://")


def is_postgres(target: str) -> bool:
    return target.lower().startswith(SCHEMES)


def redact(target: str) -> str:
    """The target as it may be shown: the password replaced by ``***``."""
    if not is_postgres(target):
        return target
    # Here, not at the top: urllib.parse (with ipaddress) is most of what checking a
    # file path would cost, and `trove stats` on a file never parses a URL.
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(target)
    if parts.password is None:
        return target
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
