"""``trove eval``: measure retrieval on a BEIR data set, compare two runs, or check pairs.

The evaluation code and rich are imported inside the functions that use them, so that
``trove --help`` and every other command start without them (output.py)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from trove.errors import TroveError
from trove.interfaces.cli.output import console, emit, errors, json_option, note, plural
from trove.interfaces.cli.root import cli, open_store

if TYPE_CHECKING:
    from trove.tools.evaluate import EvalRun, ProgressCallback


@cli.command("eval")
@click.argument("dataset", required=False, type=click.Path(path_type=Path))
@click.option("--split", default="test", show_default=True, help="qrels/<SPLIT>.tsv to use.")
@click.option(
    "--mode",
    "modes",
    # trove.models.MODES spelled out, as search's --mode does: the models are not loaded
    # for --help (tests/coldstart/test_imports.py checks that the two agree).
    default="keyword,semantic,hybrid",
    show_default=True,
    help="Comma-separated modes to run.",
)
@click.option("--embedder", help="Embedder for the evaluation store (default: default).")
@click.option(
    "--db",
    # A string, as the global --db: a path type would read postgresql://host/db as a file.
    help="Load the data set into this store (a file or a postgresql:// URL) and keep it "
    "(default: a temporary store). With --pairs: the store to check (default: the global "
    "--db).",
)
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), help="Write the run.")
@click.option(
    "--compare",
    nargs=2,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Compare two saved runs (A B): B's per-query wins and losses over A.",
)
@click.option("--measure", default="ndcg@10", show_default=True, help="Measure for --compare.")
@click.option(
    "--pairs",
    type=click.Path(dir_okay=False, path_type=Path),
    help='JSONL of {"query": ..., "expected_doc": ...} to check against an existing store.',
)
@json_option
@click.pass_context
def eval_command(
    ctx: click.Context,
    dataset: Path | None,
    modes: str,
    embedder: str | None,
    db: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Measure search quality: nDCG@10, recall@10/100, MRR@10 and latency per mode.

    DATASET is a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv),
    loaded into a temporary store. --compare A.json B.json compares two runs saved with
    --save; --pairs FILE.jsonl checks your own questions against an existing store.
    """
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    given = [name for name, on in (("DATASET", dataset), ("--compare", options["compare"]),
             ("--pairs", options["pairs"])) if on]  # fmt: skip
    if len(given) != 1:
        raise click.UsageError("give one of DATASET, --compare A B or --pairs FILE")
    quiet = as_json or not errors().is_terminal
    # A terminated eval unwinds like Ctrl-C, so its temporary store is removed.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    try:
        if options["compare"]:
            first, second = options["compare"]
            _compare(first, second, options["measure"], chosen, modes_given(ctx), as_json)
        elif options["pairs"]:
            asked = chosen if modes_given(ctx) else None
            _pairs(ctx, options["pairs"], db, embedder, asked, as_json, quiet)
        else:
            assert dataset is not None
            # eval's own --embedder, else the global one (None: keyword only).
            model = ctx.obj["embedder"] if embedder is None else embedder
            with _bar(quiet) as progress:
                from trove.tools.evaluate import evaluate  # here: see the docstring

                run = evaluate(
                    dataset,
                    split=options["split"],
                    modes=chosen,
                    embedder=None if model == "none" else model,
                    db=db,
                    progress=progress,
                )
            if options["save"]:
                run.save(options["save"])
            _print_run(run, as_json)
    except TroveError as exc:
        raise click.ClickException(str(exc)) from None


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def modes_given(ctx: click.Context) -> bool:
    source = ctx.get_parameter_source("modes")
    return source is not None and source.name != "DEFAULT"


@contextmanager
def _bar(quiet: bool) -> Iterator[ProgressCallback]:
    # here: see the docstring
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description:<9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=errors(),
        transient=True,
        disable=quiet,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        yield progress


def _print_run(run: EvalRun, as_json: bool) -> None:
    from rich.table import Table  # here: see the docstring

    from trove.tools.evaluate import MEASURES

    if as_json:
        emit(run.summary())
        return
    title = (
        f"{run.dataset} ({run.split}): {plural(run.queries, 'query', 'queries')}, "
        f"{plural(run.documents, 'document')}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("mode")
    for name, _ in MEASURES:
        table.add_column(name, justify="right")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    for mode, result in run.modes.items():
        figures = [f"{result.measures[name]:.3f}" for name, _ in MEASURES]
        table.add_row(mode, *figures, f"{result.p50_ms:.1f}", f"{result.p95_ms:.1f}")
    console().print(table)
    notes = [f"embedder: {run.embedder or 'none'}", f"loaded in {run.load_s:.1f} s"]
    if run.skipped_unjudged:
        skipped = plural(run.skipped_unjudged, "query", "queries")
        notes.append(f"{skipped} without judgments in {run.split} skipped")
    if run.missing_queries:
        notes.append(f"{plural(run.missing_queries, 'judged query id')} not in queries.jsonl")
    if run.skipped_documents:
        shown = ", ".join(run.skipped_documents[:20])
        more = len(run.skipped_documents) - 20
        skipped = plural(len(run.skipped_documents), "document")
        notes.append(
            f"{skipped} with no text and no title skipped: "
            f"{shown}{f' and {more} more' if more > 0 else ''}"
        )
    console().print("; ".join(notes), style="dim", highlight=False)


def _compare(
    a: Path, b: Path, measure: str, modes: list[str], filtered: bool, as_json: bool
) -> None:
    from rich.table import Table  # here: see the docstring

    from trove.tools.evaluate import EvalRun, compare

    first, second = EvalRun.load(a), EvalRun.load(b)
    found = compare(first, second, measure=measure, modes=modes if filtered else None)
    if as_json:
        emit([c.to_dict() for c in found])
        return
    table = Table(title=f"{b.name} against {a.name}: {measure}", title_justify="left")
    for column in ("mode", "queries", "A", "B", "B - A", "wins", "losses", "ties", "p"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for c in found:
        table.add_row(
            c.mode,
            str(c.queries),
            f"{c.mean_a:.3f}",
            f"{c.mean_b:.3f}",
            f"{c.mean_b - c.mean_a:+.3f}",
            str(c.wins),
            str(c.losses),
            str(c.ties),
            f"{c.p_randomization:.4f}",
        )
    console().print(table)
    console().print(
        "p: paired randomization test, two-sided, 10,000 resamples (scipy); "
        "wins: queries where B scores higher",
        style="dim",
    )
    for c in found:
        for qid, text, x, y in c.changes[:5]:
            console().print(f"  {c.mode} {qid}: {x:.3f} -> {y:.3f}  {text[:70]}", highlight=False)


def _pairs(
    ctx: click.Context,
    path: Path,
    db: str | None,
    embedder: str | None,
    modes: list[str] | None,
    as_json: bool,
    quiet: bool,
) -> None:
    from rich.table import Table  # here: see the docstring

    from trove.tools.pairs import PAIR_KS, evaluate_pairs, read_pairs

    pairs = read_pairs(path)
    if db is not None:
        ctx.obj["db"] = db
    if embedder is not None:
        ctx.obj["embedder"] = None if embedder == "none" else embedder
    # create=False: --pairs checks an existing store (a file or a postgresql:// URL).
    with open_store(ctx, create=False) as kb, _bar(quiet) as progress:
        result = evaluate_pairs(kb, pairs, modes=modes, progress=progress)
    for expected in result.unknown:
        note(f"warning: expected_doc {expected!r} matches no document id or source_id")
    if as_json:
        emit(result.to_dict())
        return
    table = Table(title=f"{path.name}: {plural(result.pairs, 'pair')}", title_justify="left")
    table.add_column("mode")
    for k in PAIR_KS:
        table.add_column(f"recall@{k}", justify="right")
    for mode, figures in result.recall.items():
        table.add_row(mode, *(f"{figures[f'recall@{k}']:.3f}" for k in PAIR_KS))
    console().print(table)
    console().print(
        "expected_doc matches a document id or a source_id (e.g. the file path of an "
        "ingested file)",
        style="dim",
    )
    for mode, missed in result.misses.items():
        for pair in missed[:5]:
            console().print(
                f"  {mode}: not in the top 10: {pair['query'][:60]!r} -> {pair['expected_doc']}",
                highlight=False,
            )
