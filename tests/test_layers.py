"""The package's shape: no import cycles between layers, modules and functions within the
house limits (DDL and route tables excepted, as tools/sizes.py counts). Drawn from the
source by tools/layers.py and tools/sizes.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_trove_tools_{name}", TOOLS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


layers = _tool("layers")
sizes = _tool("sizes")


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_every_module_placed_and_every_import_points_down_the_table() -> None:
    assert layers.problems() == []


def test_no_more_than_three_modules_import_one_another() -> None:
    assert len(layers.tangles(layers.graph())[0]) <= layers.MAX_TANGLE


def test_every_module_and_function_within_the_limits() -> None:
    assert sizes.oversized() == []


def test_the_table_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert layers.main() == 0
    out = capsys.readouterr().out
    assert out.startswith("layer")
    assert "store       operations, ingest, write, backends, search, models, core" in out
    assert "largest strongly connected set: " in out


# A small package for the checks below: three layers, top to bottom.
PLACED = {"trove": "api", "trove.store": "store", "trove.backends": "backends"}
ALLOWED = {"api": ("store", "backends"), "store": ("backends",), "backends": ()}
TREE = {
    "trove/__init__.py": "",
    "trove/store.py": "from trove.backends import base\n",
    "trove/backends/__init__.py": "",
    "trove/backends/base.py": "",
    "trove/backends/sqlite.py": "from trove.backends import base\n",
}


def _problems(tmp_path: Path, **changes: str) -> list[str]:
    files = dict(TREE)
    files.update({f"trove/{name.replace('__', '/')}.py": text for name, text in changes.items()})
    return layers.problems(_write(tmp_path, files), PLACED, ALLOWED)


def test_interfaces_and_ingest_keep_out_of_what_they_need_not_know() -> None:
    assert "backends" not in layers.ALLOWED["interfaces"]
    assert "write" not in layers.ALLOWED["ingest"] and "search" not in layers.ALLOWED["ingest"]
    assert "store" in layers.ALLOWED["interfaces"] and "core" in layers.ALLOWED["ingest"]


def test_a_tree_that_keeps_the_table_passes(tmp_path: Path) -> None:
    assert _problems(tmp_path) == []


def test_an_import_up_the_table_fails_even_under_type_checking(tmp_path: Path) -> None:
    base = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from trove.store import S\n"
    assert _problems(tmp_path, backends__base=base) == [
        "trove.backends.base -> trove.store: backends may not import store"
    ]


def test_an_import_inside_a_function_counts(tmp_path: Path) -> None:
    found = _problems(tmp_path, backends__base="def f():\n    from .. import store\n")
    assert found == ["trove.backends.base -> trove.store: backends may not import store"]


def test_a_module_in_no_layer_fails(tmp_path: Path) -> None:
    assert _problems(tmp_path, agent="") == ["trove.agent: in no layer"]


def test_a_placed_name_that_is_no_module_fails(tmp_path: Path) -> None:
    src = _write(tmp_path, TREE)
    found = layers.problems(src, {**PLACED, "trove.gone": "store"}, ALLOWED)
    assert found == ["trove.gone: placed in LAYERS but no such module"]


def test_a_concrete_backend_named_above_the_backends_fails(tmp_path: Path) -> None:
    found = _problems(tmp_path, store="from trove.backends.sqlite import SQLiteBackend\n")
    assert found == [
        "trove.store -> trove.backends.sqlite: only trove.opening names a concrete backend"
    ]


def test_a_cycle_of_more_than_three_modules_fails(tmp_path: Path) -> None:
    ring = {f"backends__m{i}": f"from trove.backends import m{(i + 1) % 4}\n" for i in range(4)}
    found = _problems(tmp_path, **ring)
    assert found == [
        "4 modules import one another (at most 3): "
        "trove.backends.m0, trove.backends.m1, trove.backends.m2, trove.backends.m3"
    ]
    assert layers.tangles(layers.graph(tmp_path))[0] == [f"trove.backends.m{i}" for i in range(4)]


def test_a_cycle_between_layers_fails_by_its_upward_edge(tmp_path: Path) -> None:
    found = _problems(tmp_path, backends__base="import trove.store\n")
    assert found == ["trove.backends.base -> trove.store: backends may not import store"]


def test_a_cycle_of_three_within_a_layer_is_allowed(tmp_path: Path) -> None:
    ring = {f"backends__m{i}": f"from trove.backends import m{(i + 1) % 3}\n" for i in range(3)}
    assert _problems(tmp_path, **ring) == []


def test_relative_and_package_imports_resolve_to_modules(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "trove/__init__.py": "",
            "trove/store.py": "from . import write\nfrom .ingest import run\n",
            "trove/write.py": "from .backends import base\n",
            "trove/ingest/__init__.py": "",
            "trove/ingest/run.py": "from trove import write\n",
            "trove/backends/__init__.py": "",
            "trove/backends/base.py": "",
        },
    )
    g = layers.graph(src)
    assert g["trove.ingest.run"] == {"trove.write"}
    assert g["trove.store"] == {"trove.write", "trove.ingest.run"}
    assert g["trove.write"] == {"trove.backends.base"}


def test_sizes_count_code_not_strings(tmp_path: Path) -> None:
    ddl = "def schema():\n    return '''\n" + "CREATE TABLE t (x);\n" * 80 + "'''\n"
    long_logic = "def long():\n" + "    x = 1\n" * 60
    src = _write(
        tmp_path,
        {"trove/a.py": ddl + long_logic, "trove/big.py": "x = 1\n" * 500},
    )
    assert sizes.oversized(src) == ["trove/a.py: long (61)", "trove/big.py: module (500)"]
