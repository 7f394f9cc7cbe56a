"""``trove serve`` (HTTP JSON API) and ``trove mcp`` (MCP server): configure, open, run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from trove.errors import TroveError
from trove.interfaces.cli.root import cli, open_store
from trove.opening import redact

if TYPE_CHECKING:
    from trove.interfaces.config import ServerConfig

F = TypeVar("F", bound=Callable[..., Any])


def server_options(func: F) -> F:
    """Options both servers share; each overrides the config file's value when given."""
    options = [
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            envvar="TROVE_CONFIG",
            show_envvar=True,
            help="Server configuration (TOML): workspace, rights, tokens. See docs/agents.md.",
        ),
        click.option(
            "--create",
            is_flag=True,
            help="Create the store if it does not exist (otherwise a missing --db is an error).",
        ),
        click.option("--namespace", help="The workspace callers get (default: default)."),
        click.option("--session", help="Fix the session for session-scoped items."),
        click.option(
            "--allow-write/--deny-write", default=None, help="Allow writes (default: allow)."
        ),
        click.option(
            "--allow-delete/--deny-delete", default=None, help="Allow deletes (default: allow)."
        ),
        click.option(
            "--allow-global/--deny-global",
            default=None,
            help="Allow writing global items, readable from every workspace (default: deny).",
        ),
        click.option("--host", help="Address to bind (default: 127.0.0.1)."),
        click.option("--port", type=int, help="Port (default: 8765)."),
        click.option(
            "--token",
            envvar="TROVE_TOKEN",
            show_envvar=True,
            help="Require this bearer token (16+ characters) on HTTP requests. Prefer the "
            "variable: a command line is visible to other users.",
        ),
        click.option(
            "--max-body-bytes",
            type=click.IntRange(min=1),
            help="Largest request body (default: 1048576); larger ones get 413.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def replica_option(func: F) -> F:
    """``--replica URL`` (repeatable): PostgreSQL standbys that serve the reads."""
    return click.option(
        "--replica",
        "replicas",
        multiple=True,
        envvar="TROVE_REPLICAS",
        show_envvar=True,
        help="A PostgreSQL hot standby of --db that serves searches and reads (repeat for "
        "several; the variable takes them space-separated). Writes, and reads until a "
        "standby has replayed them, go to --db. See docs/postgres.md.",
    )(func)


def _config(config_path: Path | None, flags: dict[str, Any]) -> ServerConfig:
    from trove.interfaces.config import ServerConfig  # here: `trove --help` stays light

    try:
        return ServerConfig.load(config_path).override(**flags)
    except TroveError as exc:
        raise click.ClickException(str(exc)) from None


@cli.command()
@server_options
@replica_option
@click.pass_context
def serve(
    ctx: click.Context,
    config_path: Path | None,
    create: bool,
    replicas: tuple[str, ...],
    **flags: Any,
) -> None:
    """Serve the HTTP JSON API (OpenAPI schema at /openapi.json, docs at /docs)."""
    config = _config(config_path, flags)
    with open_store(ctx, create=create, replicas=replicas) as kb:
        from trove.interfaces.http import serve as run

        config.check_bind(config.host)
        where = f"http://{config.host}:{config.port}"
        access = "token required" if config.tokens else "no token: open to every local user"
        store = redact(str(ctx.obj["db"]))  # a URL's password is not for the terminal
        click.echo(f"trove: serving {store} on {where} ({access})", err=True)
        run(kb, config)


@cli.command()
@server_options
@replica_option
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts trove itself; http for streamable HTTP at /mcp.",
)
@click.pass_context
def mcp(
    ctx: click.Context,
    config_path: Path | None,
    transport: str,
    create: bool,
    replicas: tuple[str, ...],
    **flags: Any,
) -> None:
    """Run the MCP server: knowledge tools for agents, in one fixed workspace."""
    config = _config(config_path, flags)
    with open_store(ctx, create=create, replicas=replicas) as kb:
        from trove.interfaces import mcp as server

        if transport == "stdio":
            server.run_stdio(kb, config)
        else:
            config.check_bind(config.host)
            click.echo(f"trove: MCP on http://{config.host}:{config.port}/mcp", err=True)
            server.run_http(kb, config)
