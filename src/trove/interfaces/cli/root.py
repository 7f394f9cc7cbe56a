"""The root ``trove`` group, its global options (--db, --embedder), opening the store they
name, and library errors as command-line messages."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

import trove
from trove.errors import TroveError
from trove.interfaces.cli.argv import reorder
from trove.interfaces.cli.output import emit
from trove.interfaces.codes import error_code

if TYPE_CHECKING:
    import json
    import pathlib
else:  # loaded when a command runs: `trove --help` needs it not
    from trove.lazy import LazyModule

    json = LazyModule("json")


def default_db() -> pathlib.Path:
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
def open_store(
    ctx: click.Context, *, create: bool = True, replicas: tuple[str, ...] = ()
) -> Iterator[trove.Store]:
    """The store named by --db; library errors in the block become a clean message.

    Commands that only read pass ``create=False``: a mistyped --db is an error naming
    the path, not a new empty store. The servers pass their ``--replica`` standbys."""
    try:
        # --embedder chooses the model of a new store; an existing one keeps its own.
        name = ctx.obj["embedder"]
        if name is None:
            options: dict[str, Any] = {"embedder": None}
        else:
            options = {"default_embedder": "default" if name == "auto" else name}
        if replicas:
            options["replicas"] = list(replicas)
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


# The module of trove.interfaces.cli that registers each command: a command imports only
# its own module (``trove stats`` does not load the ingest, server or eval commands).
MODULES = {
    "agent": ("enrich", "events", "probe", "settings"),
    "check": ("check",),
    "clusters": ("cluster",),
    "commands": ("add", "get", "purge", "reembed", "restore", "rm", "search"),
    "edit": ("link", "links", "unlink", "update"),
    "eval": ("eval",),
    "ingest": ("ingest", "watch"),
    "listing": ("list",),
    "memory": ("clear", "dedupe", "rechunk"),
    "migrate": ("migrate",),
    "serve": ("mcp", "serve"),
    "stats": ("stats",),
    "transfer": ("backup", "export", "import"),
}
COMMANDS = {name: module for module, names in MODULES.items() for name in names}
# What `trove --help` lists for each command: the start of its docstring, past what the
# widest help shows, so that the list needs none of the modules (a test checks that it
# prints what click prints from the commands themselves).
SUMMARIES = {
    "add": "Add one document: TEXT, or standard input when TEXT is omitted or",
    "backup": "Copy the store to DEST (a new file) while others keep writing; restore",
    "check": "Check the store: SQLite's and FTS5's integrity checks (PostgreSQL: the",
    "clear": "Remove every document of NAMESPACE for good (asks first; no undo).",
    "cluster": "Named groups of documents with a rolling summary and a decision log.",
    "dedupe": "Fold near-duplicate documents into canonical ones (nothing is deleted;",
    "enrich": "Ask the configured LLM ($TROVE_LLM) for a summary, keywords and entities",
    "eval": "Measure search quality: nDCG@10, recall@10/100, MRR@10 and latency",
    "events": "Print the store's events as JSON lines: written, updated, deleted,",
    "export": "Write the whole store to TARGET: every document and field, and the",
    "get": "Print a document's text exactly as stored (--json: with its provenance).",
    "import": "Read SOURCE into the store; importing it again updates in place.",
    "ingest": "Add the files under PATHS: Markdown, text, HTML, PDF, e-mail (.eml,",
    "link": "Link SRC to DST (a typed, weighted edge; linking again sets the weight).",
    "links": "The edges from or to a document (tab-separated: src, type, dst, weight).",
    "list": "Documents newest first, a page at a time (ID, title, source, state).",
    "mcp": "Run the MCP server: knowledge tools for agents, in one fixed workspace.",
    "migrate": "Copy the store at SRC into DST (a file path or a postgresql:// URL),",
    "probe": "Recall@1/5/10 of question/document pairs (the `trove eval --pairs`",
    "purge": "Remove deleted and expired documents for good; or, given DOC_IDS,",
    "rechunk": "Cut documents into chunks again with other chunk settings (from their",
    "reembed": "Rebuild the vectors (switching embedder in one step), or fill in missing",
    "restore": "Undo `trove rm` (a document that is not deleted is reported as such).",
    "rm": "Delete documents (tombstone; `trove restore` brings them back until",
    "search": "Search the store; one line per document, best first.",
    "serve": "Serve the HTTP JSON API (OpenAPI schema at /openapi.json, docs at",
    "settings": "Show or change the store's own defaults: expand=llm|off (LLM query",
    "stats": "What the store holds.",
    "unlink": "Remove the edges from SRC to DST.",
    "update": "Change a document's text, title, tags, metadata, importance or expiry;",
    "watch": "Keep the store in step with PATH: ingest it, then every change (Ctrl-C",
}


class TroveContext(click.Context):
    """click's context, whose help formatter measures the terminal as click does but
    without importing shutil for it (shutil imports bz2 and lzma: ~3 ms of --help)."""

    def make_formatter(self) -> click.HelpFormatter:
        width = self.terminal_width or click.formatting.FORCED_WIDTH
        if width is None:
            width = max(min(terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class TroveGroup(click.Group):
    """Global options (--db, --embedder) may also follow the command; each command's
    module is imported when the command is looked up (:data:`COMMANDS`)."""

    context_class = TroveContext

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, reorder(self, ctx, args))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"trove.interfaces.cli.{COMMANDS[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and args[0] not in COMMANDS:
            for name in COMMANDS:  # a mistyped name: click suggests from those it holds
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, from :data:`SUMMARIES` for those not imported."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            # Not imported: a stand-in with the start of its docstring, summarised alike.
            command = self.commands.get(name) or click.Command(name, help=SUMMARIES[name])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


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
    # --db stays the string given (a URL or a file path): a pathlib.Path would fold the
    # "//" of postgresql://, and pathlib with the urllib.parse it imports is about 5% of
    # `trove stats`. The default is a Path (platformdirs makes one).
    ctx.obj = {"db": db or default_db(), "embedder": None if chosen == "none" else chosen}
