"""The core ``trove`` commands: add, search, get, rm, restore, purge, reembed.

Each parses its options, calls one library method and prints (rich, or ``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from trove.errors import NotFound, TroveError
from trove.interfaces.cli.originals import get_original
from trove.interfaces.cli.output import (
    Line,
    console,
    emit,
    errors,
    format_option,
    json_option,
    note,
    piped,
    plural,
    progress_bar,
    show,
    tsv_line,
)
from trove.interfaces.cli.root import cli, fail, open_store, pairs
from trove.interfaces.codes import error_code

if TYPE_CHECKING:
    from trove.hits import Hit
    from trove.search import snippet
else:  # loaded by the first search that prints snippets (stats needs none)
    from trove.lazy import LazyModule

    snippet = LazyModule("trove.search.snippet")

# trove.search.calibration.FLOOR spelled out: --help does not load the calibration for it
# (tests/coldstart/test_imports.py checks that they agree).
FLOOR = 0.3


def _given(ctx: click.Context, name: str, value: Any) -> bool:
    if name == "metadata":
        return bool(value)
    return ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT


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
@click.option(
    "--on-conflict",
    type=click.Choice(["replace", "merge", "keep"]),
    default="replace",
    show_default=True,
    help="A stored key: replace the record, merge in the options given, or keep it.",
)
@json_option
@click.pass_context
def add(
    ctx: click.Context,
    text: str | None,
    meta: tuple[str, ...],
    as_json: bool,
    on_conflict: str,
    **fields: Any,
) -> None:
    """Add one document: TEXT, or standard input when TEXT is omitted or '-'.

    Prints "added ID" (or "updated ID", "kept ID") on a terminal, the id alone to a pipe
    or file, and {"id", "action"} with --json."""
    if text is None or text == "-":
        # Bytes, not sys.stdin's text mode, which would turn CRLF into LF.
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.ClickException(f"standard input is not UTF-8 (byte {exc.start})") from None
    metadata = pairs(meta, "--meta")
    with open_store(ctx) as kb:
        item = {"text": text, "metadata": metadata, **fields}
        if on_conflict == "merge":  # only the options given on the command line change
            item = {k: v for k, v in item.items() if k == "text" or _given(ctx, k, v)}
        result = kb.write_many([item], on_conflict=on_conflict)[0]
    if as_json:
        emit({"id": result.id, "action": result.action})
    elif piped(sys.stdout):  # for scripts: id=$(trove add ...)
        click.echo(result.id)
    else:
        console().print(f"{result.action} [bold]{result.id}[/bold]")


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
@click.option("--rerank", type=click.Choice(["memory"]), help="Blend in recency, importance, use.")
@click.option("--cluster", help="Only members of this cluster.")
@click.option("--entity", "entities", multiple=True, help="Documents about all these entities.")
@click.option(
    "--all-duplicates",
    "collapse_duplicates",
    flag_value=False,
    default=None,
    help="Show every member of a duplicate group, not only its canonical document.",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0, 1),
    help=f"Hide hits scoring below this (default {FLOOR}; scores estimate relevance).",
)
@click.option("--all", "show_all", is_flag=True, help="Show weak hits too (no floor).")
@click.option("--text", "with_text", is_flag=True, help="Print each hit's best chunk in full.")
@click.option("--context", type=click.IntRange(0, 10), default=0, help="Chunks around it.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Fit hits in this many tokens.")
@format_option
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    meta: tuple[str, ...],
    as_json: bool,
    output: str,
    min_score: float | None,
    show_all: bool,
    **options: Any,
) -> None:
    """Search the store; one line per document, best first.

    Hits scoring below the floor (--min-score, default 0.3) are hidden and counted;
    --all shows them."""
    filters = {k: v for k, v in options.items() if v not in ((), None)}
    if meta:
        filters["metadata"] = pairs(meta, "--meta")
    if filters.get("expand") == "off":
        filters["expand"] = 0
    with open_store(ctx, create=False) as kb:
        found = kb.search(query, **filters)
    if getattr(found, "degraded", None):
        note(f"warning: not expanded ({found.warning})")
    floor = 0.0 if show_all else FLOOR if min_score is None else min_score
    hits = [hit for hit in found if hit.score >= floor]
    if as_json or output == "json":
        emit([hit.to_dict() for hit in hits])
        return
    if output == "tsv":
        for rank, hit in enumerate(hits, 1):
            cells = (hit.doc_id, hit.source, hit.source_id, hit.title, hit.snippet)
            tsv_line(str(rank), f"{hit.score:.4f}", *cells)
        return
    hidden = len(found) - len(hits)
    if not hits:
        note("no results" if not hidden else "no good matches")
    styled = not piped(sys.stdout)
    show(line for rank, hit in enumerate(hits, 1) for line in _hit_lines(rank, hit, styled))
    if hidden:
        note(f"{hidden} weaker hit{'s' if hidden > 1 else ''} below {floor} hidden (--all)")


def _hit_lines(rank: int, hit: Hit, styled: bool) -> Iterator[Line]:
    """A hit as lines of styled pieces; ``styled``: the «match» markers become bold yellow
    (piped, the markers stay: styles would vanish)."""
    where = ":".join(part for part in (hit.source, hit.source_id or "") if part)
    yield [
        (f"{rank:>2}. ", ""),
        (hit.title or "(untitled)", "bold"),
        (f"  {where}  {hit.doc_id}  {hit.score:.2f}", "dim"),
    ]
    if not styled:
        yield [("    " + hit.snippet, "")]
    else:
        parts = hit.snippet.replace(snippet.CLOSE, snippet.OPEN).split(snippet.OPEN)
        yield [
            ("    ", ""),
            *((part, "bold yellow" if i % 2 else "") for i, part in enumerate(parts)),
        ]
    if hit.text is not None:
        heading = f"[{hit.chunk.heading}] " if hit.chunk.heading else ""
        mark = " [truncated]" if hit.truncated else ""
        yield [(f"    {heading}{hit.text}{mark}", "")]
        for around in hit.context or []:
            yield [(f"    ({around['position']}) {around['text']}", "dim")]
    if hit.explain:
        parts = [
            f"{name} #{part['rank']} ({part['score']:.3f})"
            for name, part in hit.explain.items()
            if isinstance(part, dict) and "rank" in part
        ]
        if "found_by" in hit.explain:
            parts.append(f"found by {hit.explain['found_by']!r}")
        yield [("    " + ", ".join(parts), "dim")]


@cli.command()
@click.argument("doc_id")
@json_option
@click.option("--original", is_flag=True, help="The kept original's bytes instead of the text.")
@click.option(
    "-o",
    "--output",
    type=click.Path(),  # a str: pathlib is not loaded for the other commands
    help="With --original: write to this file, or into this folder under a safe name.",
)
@click.pass_context
def get(
    ctx: click.Context, doc_id: str, as_json: bool, original: bool, output: str | None
) -> None:
    """Print a document's text exactly as stored (--json: with its provenance)."""
    if original or output is not None:
        return get_original(ctx, doc_id, output, as_json)
    with open_store(ctx, create=False) as kb:
        doc = kb.get(doc_id)
    if doc is None:
        raise fail(NotFound(f"no document with id {doc_id!r}"))
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
    """Delete documents (tombstone; `trove restore` brings them back until `trove purge`).

    Every id is tried; the command fails (exit 1) if any could not be deleted (one
    deleted already is reported as such, and is no failure)."""
    done: list[str] = []
    already: list[str] = []
    failed: dict[str, dict[str, str]] = {}
    with open_store(ctx, create=False) as kb:
        for doc_id in doc_ids:
            try:
                (done if kb.delete(doc_id) else already).append(doc_id)
            except TroveError as exc:
                failed[doc_id] = {"code": error_code(exc)[1], "message": str(exc)}
    if as_json:
        emit({"deleted": done, "already_deleted": already, "failed": failed})
    else:
        console().print(f"deleted {plural(len(done), 'document')}")
        for doc_id in already:
            errors().print(f"{doc_id} was deleted already", highlight=False)
        for message in failed.values():
            errors().print(f"{message['code']}: {message['message']}", highlight=False)
    if failed:
        ctx.exit(1)


@cli.command()
@click.argument("doc_ids", nargs=-1, required=True)
@json_option
@click.pass_context
def restore(ctx: click.Context, doc_ids: tuple[str, ...], as_json: bool) -> None:
    """Undo `trove rm` (a document that is not deleted is reported as such)."""
    done, live = [], []
    with open_store(ctx, create=False) as kb:
        for doc_id in doc_ids:
            if kb.get(doc_id) is not None:
                live.append(doc_id)
            else:
                kb.restore(doc_id)
                done.append(doc_id)
    if as_json:
        emit({"restored": done, "not_deleted": live})
        return
    console().print(f"restored {plural(len(done), 'document')}")
    for doc_id in live:
        errors().print(f"{doc_id} is not deleted: nothing to restore", highlight=False)


@cli.command()
@click.argument("doc_ids", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Say how many would go; remove nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def purge(
    ctx: click.Context, doc_ids: tuple[str, ...], dry_run: bool, yes: bool, as_json: bool
) -> None:
    """Remove deleted and expired documents for good; or, given DOC_IDS, those documents
    whatever their state (asks first unless --yes)."""
    with open_store(ctx, create=False) as kb:
        if doc_ids:
            pending = len(doc_ids)
        else:
            data = kb.stats()
            pending = data.deleted + data.expired
        if dry_run or not pending:
            count = 0
        elif not yes and not click.confirm(
            f"remove {plural(pending, 'document')} for good?", err=True
        ):
            raise click.ClickException("nothing purged (answer y, or pass --yes)")
        else:
            count = kb.purge(ids=list(doc_ids) if doc_ids else None)
    if as_json:
        emit({"purged": count, "would_purge": pending} if dry_run else {"purged": count})
    elif dry_run:
        console().print(f"would purge {plural(pending, 'document')}")
    else:
        console().print(f"purged {plural(count, 'document')}")


@cli.command()
@click.option(
    "--embedder", "name", help="Switch to this embedder (default: the store's own, or default)."
)
@click.option("--missing", is_flag=True, help="Only embed chunks that have no vector.")
@json_option
@click.pass_context
def reembed(ctx: click.Context, name: str | None, missing: bool, as_json: bool) -> None:
    """Rebuild the vectors (switching embedder in one step), or fill in missing ones."""
    with open_store(ctx, create=False) as kb:
        total = kb.stats().chunks
        hidden = as_json or not errors().is_terminal
        with progress_bar("embedding", total, hidden=hidden) as advance:
            done = kb.reembed(name or "auto", missing=missing, progress=advance)
        lock = kb.stats().embedder
    if as_json:
        emit({"embedded": done, "embedder": lock})
    else:
        model = lock["model_id"] if lock else "none"
        console().print(f"embedded {plural(done, 'chunk')} with {model}")
