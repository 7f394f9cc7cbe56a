"""PostgreSQL targets: recognise them, split off trove's own parameters, and say where they
point without ever repeating the password.

Kept free of psycopg so the core (``trove.open``, the CLI) can use it without the extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from trove.backends.postgres.scheme import SCHEMES as SCHEMES
from trove.backends.postgres.scheme import is_postgres as is_postgres
from trove.backends.postgres.scheme import redact as redact
from trove.errors import StoreError

DEFAULT_SCHEMA = "trove"
# libpq's own default when a URL does not say; a short wait is the point of the check.
DEFAULT_CONNECT_TIMEOUT = 10
# trove's parameters: libpq refuses unknown URI parameters, so they are taken out first.
_OURS = ("schema", "pool_size")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


@dataclass(frozen=True)
class PostgresTarget:
    """A parsed ``postgresql://`` target: what libpq gets, and what trove keeps for itself."""

    conninfo: str
    schema: str
    pool_size: int
    where: str
    password: str | None

    def scrub(self, message: str) -> str:
        """``message`` with the password (if any) blanked out, for errors and logs."""
        if self.password:
            message = message.replace(self.password, "***")
        return message


def parse(target: str) -> PostgresTarget:
    """Split a target URL; ``?schema=NAME`` picks the store's schema (default ``trove``)."""
    parts = urlsplit(target)
    params = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in params if k in _OURS}
    rest = [(k, v) for k, v in params if k not in _OURS]
    if not any(k == "connect_timeout" for k, _ in rest):
        rest.append(("connect_timeout", str(DEFAULT_CONNECT_TIMEOUT)))
    schema = ours.get("schema") or DEFAULT_SCHEMA
    if not _IDENTIFIER.fullmatch(schema):
        raise StoreError(
            f"schema {schema!r} is not a plain identifier; use letters, digits and _ "
            "(at most 63, not starting with a digit)"
        )
    try:
        pool_size = int(ours.get("pool_size") or 8)
    except ValueError:
        raise StoreError("pool_size must be a whole number") from None
    if pool_size < 1:
        raise StoreError("pool_size must be at least 1")
    password = unquote(parts.password) if parts.password else None
    conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
    return PostgresTarget(conninfo, schema.lower(), pool_size, _where(parts, rest), password)


def replica_target(url: str, primary: PostgresTarget) -> PostgresTarget:
    """A standby's target: the primary's schema unless the URL names it (it must be the
    same one: a standby holds the primary's schemas), the primary's pool size."""
    if not is_postgres(url):
        raise StoreError(f"a replica must be a postgresql:// URL, not {redact(url)!r}")
    standby = parse(url)
    named = any(k == "schema" for k, _ in parse_qsl(urlsplit(url).query))
    if named and standby.schema != primary.schema:
        raise StoreError(
            f"replica {standby.where} names schema {standby.schema}, the primary "
            f"{primary.schema}: a standby serves the primary's schema (leave ?schema= out)"
        )
    return replace(standby, schema=primary.schema)


def _where(parts: SplitResult, params: list[tuple[str, str]]) -> str:
    """``host:port, database`` as libpq will resolve it (``?host=`` and ``?port=`` win)."""
    query = dict(params)
    host = query.get("host") or parts.hostname or "localhost"
    try:
        port = query.get("port") or str(parts.port or 5432)
    except ValueError:  # not a number: libpq will say so; the message still names the host
        port = "?"
    database = query.get("dbname") or parts.path.lstrip("/") or "(default)"
    if host.startswith("/"):
        return f"socket {host} port {port}, database {database}"
    return f"{host}:{port}, database {database}"
