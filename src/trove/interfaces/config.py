"""Server configuration for ``trove serve`` and ``trove mcp``: who may do what, where.

The file is TOML; every key is optional and command-line flags override it::

    namespace = "default"      # the workspace of callers without a token of their own
    session = "planning"       # optional; without one each MCP connection gets its own
    allow_write = true         # false: no write/update/link (MCP hides those tools)
    allow_delete = true        # false: no delete (MCP hides knowledge_delete)
    allow_global = false       # true: may write, update and delete `global` items
    allow_file_edits = false   # true: may update items that came from an ingested file

    [limits]
    max_content_tokens = 2048  # larger writes get 413 content_too_large; 0: no limit
    max_result_tokens = 4096   # MCP search results never exceed this many tokens

    [http]
    host = "127.0.0.1"         # any other address needs at least one token
    port = 8765
    max_body_bytes = 1048576   # larger request bodies get 413 payload_too_large

    # With any token configured, every HTTP request must carry one. A token's settings
    # default to the top-level ones above.
    [[tokens]]
    name = "ana-laptop"              # shown in logs, never the secret
    token_env = "TROVE_TOKEN_ANA"    # or: token = "a literal secret, 16+ characters"
    namespace = "ana"
    allow_delete = false
    author_tier = "explicit"         # HTTP writes: explicit (default), human or derived

MCP clients and approval: every tool is annotated for the client's approval flow —
``knowledge_search``/``_get``/``_list`` are ``readOnlyHint``; ``knowledge_write``,
``_update`` and ``_delete`` are ``destructiveHint`` (a write with an existing
``dedupe_key`` replaces that item); ``knowledge_link`` only adds. Clients such as Claude
Desktop ask before calling tools that are not read-only unless the user chose "always
allow". Those prompts are the client's choice; ``allow_write``/``allow_delete`` here are
the server's rule, enforced by the library whatever the client does.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trove.errors import MissingDependency, TroveError
from trove.limits import DEFAULT_MAX_CONTENT_TOKENS, DEFAULT_MAX_RESULT_TOKENS

DEFAULT_PORT = 8765
DEFAULT_MAX_BODY = 1024 * 1024
# A guessable token is no protection for a server on a network address.
MIN_TOKEN_CHARS = 16
_RIGHTS_KEYS = {
    "namespace",
    "session",
    "allow_write",
    "allow_delete",
    "allow_global",
    "allow_file_edits",
}
_TOKEN_KEYS = _RIGHTS_KEYS | {"name", "token", "token_env", "author_tier"}
_HTTP_KEYS = {"host", "port", "max_body_bytes"}
_LIMIT_KEYS = {"max_content_tokens", "max_result_tokens"}


class ConfigError(TroveError):
    """The server configuration (file or flags) cannot be used; the message says why."""


@dataclass(frozen=True)
class Rights:
    """What one caller may do: its workspace and permissions."""

    namespace: str = "default"
    session: str | None = None
    allow_write: bool = True
    allow_delete: bool = True
    allow_global: bool = False
    # Items that came from an ingested file belong to the file: updates are refused.
    allow_file_edits: bool = False
    # None: the interface's own tier (explicit for HTTP, llm for MCP).
    author_tier: str | None = None


@dataclass(frozen=True)
class Token:
    name: str
    secret: str = field(repr=False)
    rights: Rights


@dataclass(frozen=True)
class ServerConfig:
    rights: Rights = Rights()
    tokens: tuple[Token, ...] = ()
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_body_bytes: int = DEFAULT_MAX_BODY
    max_content_tokens: int = DEFAULT_MAX_CONTENT_TOKENS
    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS

    @property
    def content_limit(self) -> int | None:
        return self.max_content_tokens or None

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None) -> ServerConfig:
        """The configuration in ``path`` (TOML), or the defaults when ``path`` is None."""
        if path is None:
            return cls()
        tomllib = _toml()
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
        return cls.from_dict(data, origin=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, origin: str = "config") -> ServerConfig:
        _known(data, _RIGHTS_KEYS | {"http", "tokens", "limits"}, origin)
        rights = _rights(Rights(), data, origin)
        http = data.get("http", {})
        if not isinstance(http, Mapping):
            raise ConfigError(f"{origin}: [http] must be a table")
        _known(http, _HTTP_KEYS, f"{origin} [http]")
        entries = data.get("tokens", [])
        if not isinstance(entries, list):
            raise ConfigError(f"{origin}: tokens must be an array of tables ([[tokens]])")
        tokens = tuple(
            _token(rights, entry, f"{origin} tokens[{i}]") for i, entry in enumerate(entries)
        )
        limits = data.get("limits", {})
        if not isinstance(limits, Mapping):
            raise ConfigError(f"{origin}: [limits] must be a table")
        _known(limits, _LIMIT_KEYS, f"{origin} [limits]")
        config = cls(rights=rights, tokens=tokens)
        return config.override(
            max_content_tokens=_typed(limits, "max_content_tokens", int, origin),
            max_result_tokens=_typed(limits, "max_result_tokens", int, origin),
            host=_typed(http, "host", str, origin),
            port=_typed(http, "port", int, origin),
            max_body_bytes=_typed(http, "max_body_bytes", int, origin),
        )

    def override(self, **flags: Any) -> ServerConfig:
        """This configuration with command-line values (None: not given) on top.

        ``token`` adds a bearer token with the top-level rights. Top-level rights given
        here apply to the default caller, not to tokens from the file.
        """
        given = {k: v for k, v in flags.items() if v is not None}
        secret = given.pop("token", None)
        rights = replace(
            self.rights, **{k: given.pop(k) for k in list(given) if k in _RIGHTS_KEYS}
        )
        config = replace(self, rights=rights, **given)
        if secret is not None:
            token = Token("command line", _secret(secret, "--token"), rights)
            config = replace(config, tokens=(*config.tokens, token))
        if not 0 <= config.port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, not {config.port}")
        if config.max_content_tokens < 0 or config.max_result_tokens < 1:
            raise ConfigError(
                "max_content_tokens must be 0 (no limit) or more; max_result_tokens 1 or more"
            )
        if config.max_body_bytes < 1:
            raise ConfigError("max_body_bytes must be a positive number of bytes")
        if not config.rights.namespace:
            raise ConfigError("namespace must not be empty")
        return config

    def authenticate(self, bearer: str | None) -> Rights | None:
        """The rights a request gets: by its token when tokens are configured.

        None means "not allowed". Every token is compared, in constant time, so the
        answer's timing does not say how much of a guess was right.
        """
        if not self.tokens:
            return self.rights
        found = None
        for token in self.tokens:
            # As bytes: compare_digest refuses str with non-ASCII characters (a 500).
            if bearer is not None and hmac.compare_digest(
                token.secret.encode("utf-8", "surrogatepass"),
                bearer.encode("utf-8", "surrogatepass"),
            ):
                found = token.rights
        return found

    def check_bind(self, host: str) -> None:
        """Refuse to listen beyond this machine with nobody required to authenticate."""
        if not self.tokens and not is_loopback(host):
            raise ConfigError(
                f"refusing to listen on {host} without a token: anyone who can reach it "
                "could read and change the store. Configure one (--token, $TROVE_TOKEN, "
                "or [[tokens]] in the config file), or bind 127.0.0.1."
            )


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:  # pragma: no cover - Python 3.10
        import tomli

        return tomli
    except ImportError:  # pragma: no cover
        raise MissingDependency("tomli", "server", "reading a server config file") from None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost may resolve anywhere
        return False


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header, else None."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _rights(base: Rights, data: Mapping[str, Any], origin: str) -> Rights:
    values: dict[str, Any] = {}
    for key in ("allow_write", "allow_delete", "allow_global", "allow_file_edits"):
        values[key] = _typed(data, key, bool, origin)
    for key in ("namespace", "session"):
        values[key] = _typed(data, key, str, origin)
    if values["namespace"] == "":
        raise ConfigError(f"{origin}: namespace must not be empty")
    if values["session"] == "":
        values["session"] = None
    return replace(base, **{k: v for k, v in values.items() if v is not None})


def _token(defaults: Rights, entry: Any, origin: str) -> Token:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{origin}: each [[tokens]] entry must be a table")
    _known(entry, _TOKEN_KEYS, origin)
    literal = _typed(entry, "token", str, origin)
    variable = _typed(entry, "token_env", str, origin)
    if (literal is None) == (variable is None):
        raise ConfigError(f"{origin}: give exactly one of token or token_env")
    if variable is not None:
        literal = os.environ.get(variable)
        if not literal:
            raise ConfigError(f"{origin}: environment variable {variable} is not set")
    rights = _rights(defaults, entry, origin)
    tier = _typed(entry, "author_tier", str, origin)
    if tier is not None:
        from trove.write import AUTHOR_TIERS

        if tier not in AUTHOR_TIERS:
            raise ConfigError(f"{origin}: author_tier must be one of {', '.join(AUTHOR_TIERS)}")
        rights = replace(rights, author_tier=tier)
    name = _typed(entry, "name", str, origin) or variable or origin
    assert literal is not None
    return Token(name, _secret(literal, origin), rights)


def _secret(value: str, origin: str) -> str:
    value = value.strip()
    if len(value) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{origin}: a token needs at least {MIN_TOKEN_CHARS} characters "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return value


def _typed(data: Mapping[str, Any], key: str, kind: type, origin: str) -> Any:
    value = data.get(key)
    if value is None:
        return None
    # bool is an int in Python; a port of `true` is a mistake, not 1.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{origin}: {key} must be a {kind.__name__}, not {value!r}")
    return value


def _known(data: Mapping[str, Any], keys: set[str], origin: str) -> None:
    # A misspelt key in a security setting must not be silently ignored.
    unknown = sorted(set(data) - keys)
    if unknown:
        raise ConfigError(
            f"{origin}: unknown key {', '.join(unknown)}; known: {', '.join(sorted(keys))}"
        )
