"""The agent loop on the command line: ``trove events``, ``trove enrich``,
``trove settings`` and ``trove probe``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from trove.event_kinds import EVENT_KINDS
from trove.interfaces.cli.output import console, emit, json_option
from trove.interfaces.cli.root import cli, open_store


@cli.command()
@click.option("--follow", "-f", is_flag=True, help="Keep printing events as they happen.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(EVENT_KINDS), help="Repeatable.")
@click.option("--namespace", help="Only this namespace's events (and global items').")
@click.option(
    "--after",
    type=int,
    help="Start after this event number (seq); default: from now with --follow, else "
    "everything still logged (the newest 10,000 changes).",
)
@click.pass_context
def events(
    ctx: click.Context,
    follow: bool,
    kinds: tuple[str, ...],
    namespace: str | None,
    after: int | None,
) -> None:
    """Print the store's events as JSON lines: written, updated, deleted, restored, purged
    (from every process writing this file). Without --follow: what is logged after --after."""
    from trove.live import EventFeed  # here: `trove --help` stays light

    with open_store(ctx) as kb:
        feed = EventFeed(kb, kinds or EVENT_KINDS, namespace=namespace, after=after)
        if not follow and after is None:
            feed.cursor = 0  # everything still logged
        try:
            batches = feed.follow() if follow else iter([feed.poll()])
            for batch in batches:
                for event in batch:
                    click.echo(json.dumps(event, ensure_ascii=False))
                sys.stdout.flush()
        except KeyboardInterrupt:
            pass
        finally:
            feed.close()


@cli.command()
@click.option("--missing", is_flag=True, required=True, help="Documents not enriched yet.")
@json_option
@click.pass_context
def enrich(ctx: click.Context, missing: bool, as_json: bool) -> None:
    """Ask the configured LLM ($TROVE_LLM) for a summary, keywords and entities of every
    document that has none (new, changed since, or failed before)."""
    with open_store(ctx) as kb:
        if kb.llm is None:
            raise click.ClickException(
                "no LLM configured: set TROVE_LLM=openai:MODEL (and TROVE_LLM_BASE_URL)"
            )
        from trove.enrich import enrich_missing  # here: `trove --help` stays numpy-free

        counts = enrich_missing(kb)
    if as_json:
        emit(counts)
    else:
        console().print(f"enriched {counts['enriched']}, failed {counts['failed']}")


@cli.command()
@click.argument("changes", nargs=-1)
@json_option
@click.pass_context
def settings(ctx: click.Context, changes: tuple[str, ...], as_json: bool) -> None:
    """Show or change the store's own defaults: expand=llm|off (LLM query expansion on
    every search), enrich=on|off (enrichment of every write). E.g. trove settings expand=llm"""
    values: dict[str, str | None] = {}
    for change in changes:
        key, sep, value = change.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {change!r}")
        values[key] = value or None
    with open_store(ctx) as kb:
        current = kb.settings(**values)
    if as_json:
        emit(current)
    else:
        for key, value in current.items():
            console().print(f"{key} = {value}")


@cli.command(name="probe")
@click.option("--pairs", "pairs_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--save", is_flag=True, help="Keep the pairs in the store for later probes.")
@click.option("--namespace", default="default")
@json_option
@click.pass_context
def probe_command(
    ctx: click.Context, pairs_file: Path | None, save: bool, namespace: str, as_json: bool
) -> None:
    """Recall@1/5/10 of question/document pairs (the `trove eval --pairs` format; default:
    the stored ones) and the contract checks, as PASS/FAIL lines."""
    from trove.probe import pairs_from_lines, probe, save_pairs  # here: as EventFeed above

    pairs = None
    if pairs_file is not None:
        try:
            pairs = pairs_from_lines(pairs_file.read_text(encoding="utf-8").splitlines())
        except OSError as exc:
            raise click.ClickException(f"cannot read {pairs_file}: {exc.strerror}") from None
    with open_store(ctx) as kb:
        ws = kb.workspace(namespace)
        if save and pairs is not None:
            save_pairs(ws, pairs)
        report = probe(ws, pairs)
    if as_json:
        emit(report.to_dict())
    else:
        for line in report.lines:
            console().print(line, highlight=False)
    if not report.passed:
        sys.exit(1)
