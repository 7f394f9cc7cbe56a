"""A fresh process starts cheaply: heavy modules load where they are used."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HEAVY = ("numpy", "apsw", "rich.progress", "trove.store", "trove.tools.evaluate")
# What `trove --help` must not import: each costs a one-shot command milliseconds that
# python bench/coldstart.py shows (rich alone about as much as the rest of --help).
_NOT_FOR_HELP = (
    "numpy",
    "apsw",
    "rich",
    "trove.store",
    "trove.models",
    "trove.tools.evaluate",
    "trove.check",
    "trove.live",
    "trove.probe",
    "trove.originals",
    "trove.interfaces.config",
    "trove.ingest.files",
    "trove.ingest.watch",
    "trove.search.calibration",
    "tempfile",
    "logging",
    "trove.events",
    "shutil",  # with bz2 and lzma, for the terminal's width: measured without it
    "pathlib",
    "json",
    "dataclasses",
    "trove.backends.postgres.url",
    "trove.interfaces.cli.commands",
)


def _loaded(code: str, names: tuple[str, ...] = _HEAVY) -> set[str]:
    """Modules among ``names`` that a fresh interpreter has after ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


def test_import_trove_loads_nothing_heavy() -> None:
    assert _loaded("import trove") == set()


def test_cli_help_does_not_load_numpy_or_the_store() -> None:
    code = (
        "from click.testing import CliRunner\n"
        "from trove.interfaces.cli import cli\n"
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0"
    )
    assert not _loaded(code) & {"numpy", "trove.store"}  # apsw alone costs ~2 ms


def _command(*argv: str) -> str:
    """``trove ARGV`` run as the console script runs it, its output to /dev/null."""
    return (
        "import contextlib, io, sys\n"
        "from trove.interfaces.cli import main\n"
        f"sys.argv = ['trove', *{list(argv)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )


def test_the_command_line_freezes_what_its_imports_made_and_the_library_does_not() -> None:
    """main() takes the objects importing the CLI made out of the cyclic collector's scans
    (gc.freeze: they live as long as the process); `import trove` leaves the collector as
    it is, and objects made after the freeze are still collected."""
    code = (
        f"{_command('--help')}\n"
        "import gc\n"
        "frozen = gc.get_freeze_count()\n"
        "class Cycle: pass\n"
        "a = Cycle(); a.me = a; del a\n"
        "print(frozen > 10_000, gc.collect() >= 1)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "True"]
    library = "import gc, trove\ntrove.open(':memory:', embedder=None).close()\n"
    library += "print(gc.get_freeze_count())"
    out = subprocess.run(
        [sys.executable, "-c", library], check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == "0"


def test_trove_help_loads_neither_rich_nor_the_library() -> None:
    assert _loaded(_command("--help"), _NOT_FOR_HELP) == set()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    import trove

    path = tmp_path_factory.mktemp("coldstart") / "kb.db"
    with trove.open(path, embedder="hash:16") as kb:
        kb.add("alpha beta gamma", source="notes", source_id="a")
    return str(path)


def test_trove_stats_draws_no_rich_and_skips_the_sqlite_vec_package(store: str) -> None:
    # sqlite_vec's __init__ imports numpy; trove loads its extension file without it.
    assert _loaded(_command("--db", store, "stats"), ("rich", "sqlite_vec")) == set()


def test_trove_stats_builds_no_index_cache(store: str) -> None:
    """Counting reads the tallies: it neither loads nor writes the vector or word index."""
    cache = Path(f"{store}.trove-index")
    if cache.exists():
        shutil.rmtree(cache)
    subprocess.run([sys.executable, "-c", _command("--db", store, "stats")], check=True)
    assert not cache.exists()


# re spends milliseconds compiling a character class that spans many code points (it builds
# a table for it): `[\u0080-\U0010ffff]` or the CJK blocks cost 2-10 ms each. Such patterns
# are compiled where first used, not when a one-shot command imports their module.
_WIDE_CLASS = 1_000
# re's pattern parser: re._parser since Python 3.11, sre_parse before.
_sre_parse = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


def _class_span(node: object) -> Iterator[int]:
    """The code points each range of a parsed pattern's character classes spans."""
    if isinstance(node, tuple) and len(node) == 2 and str(node[0]).startswith("RANGE"):
        yield node[1][1] - node[1][0] + 1
    elif isinstance(node, (tuple, list, _sre_parse.SubPattern)):
        for item in node:
            yield from _class_span(item)


def _wide_patterns_compiled(code: str) -> list[str]:
    """The patterns with wide character classes that ``re.compile`` is given while a fresh
    interpreter runs ``code``."""
    probe = (
        "import json, re\n"
        "given, compile = [], re.compile\n"
        "def recording(pattern, flags=0):\n"
        "    given.append((pattern, int(flags)))\n"
        "    return compile(pattern, flags)\n"
        "re.compile = recording\n"
        f"{code}\n"
        "re.compile = compile\n"
        "print(json.dumps([(p, f) for p, f in given if isinstance(p, str)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    given = json.loads(out.splitlines()[-1])
    return [p for p, f in given if sum(_class_span(_sre_parse.parse(p, f))) >= _WIDE_CLASS]


def test_the_probe_sees_a_wide_class() -> None:
    code = "import re\nre.compile(r'[\\u4e00-\\u9fff]+'); re.compile('[a-z]+')"
    assert _wide_patterns_compiled(code) == [r"[\u4e00-\u9fff]+"]


def test_importing_the_query_module_compiles_no_wide_class() -> None:
    code = "import trove.search.query, trove.search.budget"
    assert _wide_patterns_compiled(code) == []


def test_trove_stats_compiles_no_wide_class(store: str) -> None:
    assert _wide_patterns_compiled(_command("--db", store, "stats")) == []


def test_trove_stats_does_not_load_numpy(store: str) -> None:
    assert _loaded(_command("--db", store, "stats"), ("numpy",)) == set()


# What counting a store must not load: numpy, the search stack, the write path, the
# word index, the thread pool of hybrid search (each made or imported at first use).
_NOT_FOR_STATS = (
    "numpy",
    "concurrent.futures",
    "trove.agent",
    "trove.enrich",
    "trove.search.hybrid",
    "trove.store_search",
    "trove.write",
    "trove.memory.clusters",
    "trove.memory.canonical",
    "trove.backends.sqlite.word_index.searcher",
    "trove.backends.sqlite.vector_index.cache",
)
# What a keyword search must not load: numpy, vectors, the write path, agent memory's
# clusters and workspaces, query expansion.
_NOT_FOR_KEYWORD = (
    "numpy",
    "sqlite_vec",
    "trove.backends.sqlite.vector_index.searcher",
    "trove.embedders.default",
    "trove.write",
    "trove.operations.upsert",
    "trove.memory.clusters",
    "trove.workspace",
    "trove.expansion",
    "concurrent.futures",  # the thread pool of hybrid search, with logging
    # the word index's cache file code: a one-shot query is answered by FTS5
    "trove.backends.sqlite.word_index.cache",
    "trove.backends.sqlite.vector_index.cache",
    "trove.search.vectors",
    "secrets",
)


# Nor (s6): the query syntax's module and its seven dataclasses with the keyword
# expressions built from them, snippets, the PostgreSQL URL parser, hybrid's fusion (each
# a dataclass or more; a dataclass costs a fresh process about 4 M instructions).
_NOT_FOR_STATS_EITHER = (
    "trove.search.query",
    "trove.backends.sqlite.word_index.fts",
    "trove.search.snippet",
    "trove.backends.postgres.url",
    "trove.search.fusion",
    "trove.originals",
)


# Nor (s7): pathlib, which imports urllib.parse and ipaddress; a store file's path is a
# string to os.path, and only a postgresql:// URL is parsed (17 M of 352 M instructions).
# Nor the search filters' module and its dataclass, named only in the backends' signatures;
# nor the hits' (Hit, ChunkHit: 17 M), made by the first search; nor what a write hands a
# backend, nor ingest's file records (ChunkRow, DocumentWrite, Vectors: 7 M; FileStat,
# FileState: 7 M), made by the first write, export or ingest.
_NOT_FOR_STATS_S7 = (
    *("pathlib", "urllib.parse", "ipaddress"),
    *("trove.search.filters", "trove.hits"),
    *("trove.backends.writes", "trove.backends.file_state"),
    # the chat model's client, links, atomic writes, ingest's ownership: first used there
    *(
        "trove.llm",
        "trove.operations.edges",
        "trove.operations.transactions",
        "trove.ingest.ownership",
    ),
)


def test_trove_stats_loads_neither_search_nor_the_write_path(store: str) -> None:
    # one fresh process for all the lists
    not_for_stats = _NOT_FOR_STATS + _NOT_FOR_STATS_EITHER + _NOT_FOR_STATS_S7
    assert _loaded(_command("--db", store, "stats"), not_for_stats) == set()


def test_the_cjk_helpers_are_the_same_from_either_module() -> None:
    from trove.search import cjk, query

    for name in ("has_cjk", "cjk_grams", "cjk_text", "cjk_segments", "blank_cjk"):
        assert getattr(query, name) is getattr(cjk, name)


def test_the_sqlite_originals_piece_is_trove_originals() -> None:
    from trove import originals
    from trove.backends.sqlite import originals as sqlite_originals

    assert sqlite_originals.PIECE == originals.PIECE


def test_postgres_url_keeps_the_scheme_helpers() -> None:
    from trove.backends.postgres import scheme, url

    assert url.is_postgres is scheme.is_postgres and url.redact is scheme.redact
    assert url.redact("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"


def test_lazy_functions_import_at_first_call_then_are_the_functions() -> None:
    code = (
        "import sys\n"
        "from trove import lazy\n"
        "lazy.functions(globals(), 'colorsys', 'rgb_to_hsv')\n"
        "assert 'colorsys' not in sys.modules\n"
        "assert rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n"
        "import colorsys\n"
        "assert rgb_to_hsv is colorsys.rgb_to_hsv"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_keyword_search_loads_only_what_it_runs(store: str) -> None:
    argv = ("--db", store, "search", "alpha", "--mode", "keyword")
    assert _loaded(_command(*argv), _NOT_FOR_KEYWORD) == set()


def test_a_lazy_module_imports_at_first_use() -> None:
    code = (
        "import sys\n"
        "from trove.lazy import LazyModule\n"
        "colorsys = LazyModule('colorsys')\n"
        "assert 'colorsys' not in sys.modules\n"
        "assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n"
        "assert 'colorsys' in sys.modules and 'rgb_to_hsv' in vars(colorsys)\n"
        "try:\n"
        "    colorsys.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_store_opened_only_to_read_closes_cleanly(tmp_path: Path) -> None:
    """The writer, the search threads and the word index are made at first use; a
    store that never made them closes, and one closed refuses writes all the same."""
    import trove
    from trove.errors import StoreError

    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:16") as kb:
        kb.add("alpha beta")
    kb = trove.open(path)
    backend = kb.backend
    assert kb.stats().documents == 1
    kb.close()
    assert not {"writer", "hybrid_search"} & set(vars(kb))
    assert "_word_searcher" not in vars(backend)
    with pytest.raises(StoreError):
        kb.add("gamma")
    with trove.open(path) as kb:
        assert len(kb.search("alpha", mode="keyword")) == 1
        assert kb._pool._executor is None  # the first task (a hybrid search's) starts it
        assert kb._pool.submit(len, "abc").result() == 3
        assert kb._pool._executor is not None
    assert "writer" not in vars(kb)


def test_trove_stats_prints_aligned_plain_lines(store: str) -> None:
    from click.testing import CliRunner

    from trove.interfaces.cli import cli

    result = CliRunner().invoke(cli, ["--db", store, "stats"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "documents               1"
    assert lines[-1] == "by_namespace            default: 1"
    # One column of values, after the longest key ("chunks without vectors") and two spaces.
    assert all(line[22:24] == "  " and line[24] != " " for line in lines)


_CLI_MODULES = [
    f"trove.interfaces.cli.{m}"
    for m in (
        *("agent", "check", "commands", "edit", "eval", "ingest"),
        *("listing", "memory", "migrate", "serve", "stats", "transfer"),
    )
]


def test_each_command_loads_its_own_module_only(store: str) -> None:
    loaded = _loaded(_command("--db", store, "stats"), tuple(_CLI_MODULES))
    assert loaded == {"trove.interfaces.cli.stats"}
    assert _loaded(_command("--help"), tuple(_CLI_MODULES)) == set()


def test_the_command_table_names_every_command_and_its_module() -> None:
    """root.COMMANDS is where each command is registered, and nothing registers elsewhere."""
    import pkgutil

    from trove.interfaces import cli as package
    from trove.interfaces.cli import root

    for module in pkgutil.iter_modules(package.__path__):
        if module.name != "__main__":  # runs the command line
            importlib.import_module(f"trove.interfaces.cli.{module.name}")
    assert set(root.cli.commands) == set(root.COMMANDS) == set(root.SUMMARIES)
    for name, command in root.cli.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == f"trove.interfaces.cli.{root.COMMANDS[name]}"


@pytest.mark.parametrize("columns", ["20", "60", "80", "200"])
def test_trove_help_lists_what_click_lists_from_the_commands(columns: str) -> None:
    """`trove --help` summarises each command from root.SUMMARIES without importing it;
    the list must read exactly as click writes it from the loaded commands."""
    code = (
        "import contextlib, io, sys\n"
        "from trove.interfaces.cli import main, root\n"
        "sys.argv = ['trove', '--help']\n"
        "def show():\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "        main()\n"
        "    return out.getvalue()\n"
        "lazy = show()\n"
        "for name in root.COMMANDS:\n"
        "    root.cli.get_command(None, name)\n"
        "assert set(root.cli.commands) == set(root.COMMANDS)\n"
        "print(lazy == show())"
    )
    env = {**os.environ, "COLUMNS": columns}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    )
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("columns", [None, "30", "66", "300", "x"])
def test_help_is_as_wide_as_click_makes_it(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import click

    from trove.interfaces.cli.root import TroveContext, cli

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert TroveContext(cli).make_formatter().width == click.HelpFormatter().width


def test_a_mistyped_command_is_told_the_nearest_one() -> None:
    """click (8.2+) suggests from the commands its group holds: all of them, imported."""
    import click

    run = subprocess.run(
        [sys.executable, "-c", "from trove.interfaces.cli import main; main()", "stat"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "No such command 'stat'." in run.stderr
    if hasattr(click.exceptions, "NoSuchCommand"):
        assert "Did you mean 'stats'?" in run.stderr


def test_defaults_the_cli_spells_out_are_the_librarys() -> None:
    """The CLI writes a few library defaults out so that --help loads none of their
    modules; they must not drift apart."""
    from trove.ingest.files import DEFAULT_MAX_BYTES
    from trove.ingest.watch import DEFAULT_DEBOUNCE_MS
    from trove.interfaces.cli import commands, eval, ingest
    from trove.models import MODES
    from trove.search.calibration import FLOOR

    assert commands.FLOOR == FLOOR
    assert ingest.DEFAULT_MAX_BYTES == DEFAULT_MAX_BYTES
    assert ingest.DEFAULT_DEBOUNCE_MS == DEFAULT_DEBOUNCE_MS
    modes = next(p for p in eval.eval_command.params if p.name == "modes")
    assert modes.default == ",".join(MODES)


def test_the_sqlite_vec_extension_is_the_packages_own() -> None:
    import sqlite_vec

    from trove.backends.sqlite.vectors import loadable_path

    assert loadable_path() == sqlite_vec.loadable_path()


def test_trove_models_still_names_the_hits() -> None:
    """Hit and ChunkHit live in trove.hits (opening a store makes neither); trove.models
    names them as it always did."""
    import trove.models
    from trove import hits
    from trove.models import ChunkHit, Hit

    assert (Hit, ChunkHit) == (hits.Hit, hits.ChunkHit)
    assert trove.models.Hit is hits.Hit
    with pytest.raises(AttributeError, match="no_such_model"):
        trove.models.no_such_model  # noqa: B018


@pytest.mark.parametrize("name", ["Store", "Hit", "evaluate", "evaluate_pairs", "WriteResult"])
def test_public_names_load_on_first_use(name: str) -> None:
    import trove

    assert callable(getattr(trove, name))


def test_evaluate_is_the_function_after_its_module_is_imported() -> None:
    code = "import trove.interfaces.cli.eval, trove\nassert callable(trove.evaluate)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_attribute_is_an_attribute_error() -> None:
    import trove

    with pytest.raises(AttributeError):
        trove.no_such_name  # noqa: B018


def test_opening_a_store_does_not_scan_installed_packages_for_plugins(tmp_path: Path) -> None:
    code = (
        "import sys, trove\n"
        f"with trove.open({str(tmp_path / 'kb.db')!r}, embedder='hash:16') as kb:\n"
        "    kb.add('alpha beta'); kb.search('alpha')\n"
        "print('importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"
