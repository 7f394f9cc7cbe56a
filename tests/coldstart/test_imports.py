"""A fresh process starts cheaply: heavy modules load where they are used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_HEAVY = ("numpy", "apsw", "rich.progress", "trove.store", "trove.tools.evaluate")


def _loaded(code: str) -> set[str]:
    """Modules among the heavy ones that a fresh interpreter has after ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
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
