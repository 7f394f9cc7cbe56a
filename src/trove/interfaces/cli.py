"""The ``trove`` command: parse, call one library method, print (rich, or ``--json``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

import trove

from ..backends.postgres_url import is_postgres, redact
from ..errors import TroveError
from ..models import Hit
from ..search import snippet

F = TypeVar("F", bound=Callable[..., Any])
console = Console()
errors = Console(stderr=True)


def default_db() -> Path:
    """``$TROVE_DB``, else ``trove.db`` in the user's data directory."""
    import platformdirs

    return platformdirs.user_data_path("trove", appauthor=False) / "trove.db"


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@contextmanager
def open_store(ctx: click.Context) -> Iterator[trove.Store]:
    """The store named by --db; library errors in the block become a clean message."""
    try:
        # --embedder chooses the model of a new store; an existing one keeps its own.
        name = ctx.obj["embedder"]
        if name is None:
            options: dict[str, Any] = {"embedder": None}
        else:
            options = {"default_embedder": "default" if name == "auto" else name}
        with trove.open(ctx.obj["db"], **options) as kb:
            yield kb
    except TroveError as exc:
        raise click.ClickException(str(exc)) from None


def _pairs(values: tuple[str, ...], option: str) -> dict[str, Any]:
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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


@cli.command()
@click.argument("text", required=False)
@click.option("--title", default="", help="Title of the document.")
@click.option("--source", default="", help="Where it came from (e.g. notes, mail).")
@click.option("--source-id", help="Its id within the source; re-adding it updates in place.")
@click.option("--doc-type", default="", help="Kind of document (note, email, chat ...).")
@click.option("--author", default="")
@click.option("--participant", "participants", multiple=True, help="Repeatable.")
@click.option("--timestamp", help="ISO-8601 time, e.g. 2026-11-03T09:00:00Z.")
@click.option("--url", default="")
@click.option("--thread-id", default="")
@click.option("--channel", default="")
@click.option("--tag", "tags", multiple=True, help="Repeatable.")
@click.option("--meta", "meta", multiple=True, help="KEY=VALUE metadata (JSON values parsed).")
@click.option("--namespace", default="default")
@click.option("--dedupe-key", help="A key of your own; writing it again updates in place.")
@click.option("--expires-at", help="ISO-8601 time after which the document disappears.")
@json_option
@click.pass_context
def add(
    ctx: click.Context, text: str | None, meta: tuple[str, ...], as_json: bool, **fields: Any
) -> None:
    """Add one document: TEXT, or standard input when TEXT is omitted or '-'."""
    if text is None or text == "-":
        # Bytes, not sys.stdin's text mode, which would turn CRLF into LF.
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.ClickException(f"standard input is not UTF-8 (byte {exc.start})") from None
    metadata = _pairs(meta, "--meta")
    with open_store(ctx) as kb:
        result = kb.write_many([{"text": text, "metadata": metadata, **fields}])[0]
    if as_json:
        emit({"id": result.id, "action": result.action})
    else:
        console.print(f"{result.action} [bold]{result.id}[/bold]")


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--mode",
    type=click.Choice(["keyword", "semantic", "hybrid"]),
    help="Default: hybrid, or keyword for a store without an embedder.",
)
@click.option("--explain", is_flag=True, help="Show each retriever's rank and score.")
@click.option("--source", multiple=True, help="Only these sources (repeatable).")
@click.option("--doc-type", multiple=True)
@click.option("--author", multiple=True)
@click.option("--tag", "tags", multiple=True, help="Documents with all these tags.")
@click.option("--since", help="On or after this time (ISO-8601).")
@click.option("--until", help="On or before this time (ISO-8601).")
@click.option("--namespace", default="default")
@click.option("--meta", multiple=True, help="KEY=VALUE metadata equality (repeatable).")
@click.option("--raw", is_flag=True, help="QUERY is FTS5 syntax, not plain text.")
@click.option("--variant", "variants", multiple=True, help="Another phrasing (repeatable).")
@click.option(
    "--expand",
    type=click.Choice(["llm", "off"]),
    help="llm: also search the configured LLM's variants (default: trove settings).",
)
@json_option
@click.pass_context
def search(
    ctx: click.Context, query: str, meta: tuple[str, ...], as_json: bool, **options: Any
) -> None:
    """Search the store; one line per document, best first."""
    filters = {k: v for k, v in options.items() if v not in ((), None)}
    if meta:
        filters["metadata"] = _pairs(meta, "--meta")
    if filters.get("expand") == "off":
        filters["expand"] = 0
    with open_store(ctx) as kb:
        hits = kb.search(query, **filters)
    if getattr(hits, "degraded", None):
        errors.print(f"warning: not expanded ({hits.warning})")
    if as_json:
        emit([hit.to_dict() for hit in hits])
        return
    if not hits:
        errors.print("no results")
    for rank, hit in enumerate(hits, 1):
        _print_hit(rank, hit)
        if hit.explain:
            parts = [
                f"{name} #{part['rank']} ({part['score']:.3f})"
                for name, part in hit.explain.items()
                if isinstance(part, dict) and "rank" in part
            ]
            if "found_by" in hit.explain:
                parts.append(f"found by {hit.explain['found_by']!r}")
            console.print(Text("    " + ", ".join(parts), style="dim"))


def _print_hit(rank: int, hit: Hit) -> None:
    where = ":".join(part for part in (hit.source, hit.source_id or "") if part)
    line = Text(f"{rank:>2}. ")
    line.append(hit.title or "(untitled)", style="bold")
    line.append(f"  {where}  {hit.doc_id}  {hit.score:.2f}", style="dim")
    console.print(line)
    body = Text("    ")
    for i, part in enumerate(hit.snippet.replace(snippet.CLOSE, snippet.OPEN).split(snippet.OPEN)):
        body.append(part, style="bold yellow" if i % 2 else "")
    console.print(body)


@cli.command()
@click.argument("doc_id")
@json_option
@click.pass_context
def get(ctx: click.Context, doc_id: str, as_json: bool) -> None:
    """Print a document's text exactly as stored (--json: with its provenance)."""
    with open_store(ctx) as kb:
        doc = kb.get(doc_id)
    if doc is None:
        raise click.ClickException(f"no document with id {doc_id!r}")
    if as_json:
        emit(doc.to_dict())
    else:
        sys.stdout.buffer.write(doc.text.encode("utf-8"))
        sys.stdout.flush()


@cli.command()
@click.argument("doc_ids", nargs=-1, required=True)
@json_option
@click.pass_context
def rm(ctx: click.Context, doc_ids: tuple[str, ...], as_json: bool) -> None:
    """Delete documents (tombstone; `trove restore` brings them back until `trove purge`)."""
    with open_store(ctx) as kb:
        for doc_id in doc_ids:
            kb.delete(doc_id)
    if as_json:
        emit({"deleted": list(doc_ids)})
    else:
        console.print(f"deleted {len(doc_ids)} document(s)")


@cli.command()
@click.argument("doc_ids", nargs=-1, required=True)
@json_option
@click.pass_context
def restore(ctx: click.Context, doc_ids: tuple[str, ...], as_json: bool) -> None:
    """Undo `trove rm`."""
    with open_store(ctx) as kb:
        for doc_id in doc_ids:
            kb.restore(doc_id)
    if as_json:
        emit({"restored": list(doc_ids)})
    else:
        console.print(f"restored {len(doc_ids)} document(s)")


@cli.command()
@json_option
@click.pass_context
def purge(ctx: click.Context, as_json: bool) -> None:
    """Remove deleted and expired documents for good."""
    with open_store(ctx) as kb:
        count = kb.purge()
    if as_json:
        emit({"purged": count})
    else:
        console.print(f"purged {count} document(s)")


@cli.command()
@click.option(
    "--embedder", "name", help="Switch to this embedder (default: the store's own, or default)."
)
@click.option("--missing", is_flag=True, help="Only embed chunks that have no vector.")
@json_option
@click.pass_context
def reembed(ctx: click.Context, name: str | None, missing: bool, as_json: bool) -> None:
    """Rebuild the vectors (switching embedder in one step), or fill in missing ones."""
    with open_store(ctx) as kb:
        total = kb.stats().chunks
        with Progress(
            TextColumn("[bold]embedding"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=errors,
            transient=True,
            disable=as_json or not errors.is_terminal,
        ) as bar:
            task = bar.add_task("embedding", total=total)
            done = kb.reembed(
                name or "auto", missing=missing, progress=lambda n: bar.update(task, advance=n)
            )
        lock = kb.stats().embedder
    if as_json:
        emit({"embedded": done, "embedder": lock})
    else:
        model = lock["model_id"] if lock else "none"
        console.print(f"embedded {done} chunk(s) with {model}")


@cli.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """What the store holds."""
    with open_store(ctx) as kb:
        data = kb.stats().to_dict()
    data["path"] = redact(str(ctx.obj["db"]))
    if as_json:
        emit(data)
        return
    table = Table(show_header=False, box=None)
    for key in ("path", "documents", "chunks", "deleted", "expired", "text_bytes", "file_bytes"):
        table.add_row(key, str(data[key]))
    lock = data["embedder"]
    embedder = f"{lock['model_id']} ({lock['dimension']}-d, {lock['spec']})" if lock else "none"
    table.add_row("embedder", embedder)
    table.add_row("vectors", str(data["vectors"]))
    for key in ("by_source", "by_doc_type", "by_namespace"):
        table.add_row(key, ", ".join(f"{k or '-'}: {v}" for k, v in data[key].items()) or "-")
    console.print(table)


# Commands that live in their own modules register themselves on import.
from . import cli_agent, cli_eval, cli_ingest, cli_migrate, cli_serve  # noqa: E402, F401
from . import cli_transfer as _transfer  # noqa: E402, F401


def main() -> None:
    cli(prog_name="trove")


if __name__ == "__main__":
    main()
