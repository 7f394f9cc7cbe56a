"""The root ``trove`` group, its global options (--db, --embedder), opening the store they
name, and library errors as command-line messages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

import trove
from trove.backends.postgres.url import is_postgres
from trove.errors import TroveError
from trove.interfaces.cli.argv import reorder
from trove.interfaces.cli.output import emit
from trove.interfaces.codes import error_code


def default_db() -> Path:
    """``$TROVE_DB``, else ``trove.db`` in the user's data directory."""
    import platformdirs

    return platformdirs.user_data_path("trove", appauthor=False) / "trove.db"


class Failed(click.ClickException):
    """A library error: ``Error: code: message`` on stderr, or with --json the same
    ``{"error": {"code", "message"}}`` body as HTTP (on stdout); exit status 1."""

    def __init__(self, exc: TroveError, *, as_json: bool) -> None:
        super().__init__(str(exc))
        self.code = error_code(exc)[1]
        self.as_json = as_json

    def show(self, file: Any = None) -> None:
        if self.as_json:
            emit({"error": {"code": self.code, "message": self.message}})
        else:
            click.echo(f"Error: {self.code}: {self.message}", err=True)


def fail(exc: TroveError) -> Failed:
    """``raise fail(NotFound(...))`` from a command: reported as open_store reports."""
    ctx = click.get_current_context()
    return Failed(exc, as_json=bool(ctx.params.get("as_json")))


@contextmanager
def open_store(ctx: click.Context, *, create: bool = True) -> Iterator[trove.Store]:
    """The store named by --db; library errors in the block become a clean message.

    Commands that only read pass ``create=False``: a mistyped --db is an error naming
    the path, not a new empty store."""
    try:
        # --embedder chooses the model of a new store; an existing one keeps its own.
        name = ctx.obj["embedder"]
        if name is None:
            options: dict[str, Any] = {"embedder": None}
        else:
            options = {"default_embedder": "default" if name == "auto" else name}
        with trove.open(ctx.obj["db"], create=create, **options) as kb:
            yield kb
    except TroveError as exc:
        raise fail(exc) from None


def pairs(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """``KEY=VALUE`` options as a dict; a value that is JSON is parsed (``n=3`` -> 3)."""
    found: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=option)
        try:
            found[key] = json.loads(raw)
        except ValueError:
            found[key] = raw
    return found


class TroveGroup(click.Group):
    """Global options (--db, --embedder) may also follow the command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, reorder(self, ctx, args))


@click.group(cls=TroveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    envvar="TROVE_DB",
    help="Store file or postgresql:// URL (default: $TROVE_DB, else trove.db in the user "
    "data directory).",
)
@click.option(
    "--embedder",
    envvar="TROVE_EMBEDDER",
    help="Embedder for a new store: default, multilingual, openai:MODEL, ... or none "
    "(keyword only). An existing store keeps the one it was made with.",
)
@click.version_option(trove.__version__, prog_name="trove")
@click.pass_context
def cli(ctx: click.Context, db: str | None, embedder: str | None) -> None:
    """trove: a local-first knowledge store. Keep documents, find them again."""
    chosen = embedder or "auto"
    # A URL stays a string: Path() would fold the "//" of postgresql://.
    target = db if db and is_postgres(db) else Path(db) if db else default_db()
    ctx.obj = {"db": target, "embedder": None if chosen == "none" else chosen}
