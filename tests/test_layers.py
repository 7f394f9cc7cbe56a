"""The package's shape: no import cycles between layers, modules and functions within the
house limits (DDL and route tables excepted, as tools/sizes.py counts). Drawn from the
source by tools/layers.py and tools/sizes.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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


def test_no_import_cycle_between_layers() -> None:
    assert layers.cycles() == []


def test_every_module_and_function_within_the_limits() -> None:
    assert sizes.oversized() == []


def test_cycle_through_function_and_type_imports_is_found(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "trove/__init__.py": "",
            "trove/search/__init__.py": "",
            "trove/search/hybrid.py": "def f():\n    from ..backends import sqlite\n",
            "trove/backends/__init__.py": "",
            "trove/backends/sqlite.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from trove.search.hybrid import f\n"
            ),
        },
    )
    [(tangled, closing)] = layers.cycles(src)
    assert tangled == {"search", "backends"}
    assert closing == [
        "trove.backends.sqlite -> trove.search.hybrid",
        "trove.search.hybrid -> trove.backends.sqlite",
    ]


def test_one_way_imports_are_no_cycle(tmp_path: Path) -> None:
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
    assert layers.cycles(src) == []
    assert layers.graph(src)["trove.ingest.run"] == {"trove.write"}


def test_sizes_count_code_not_strings(tmp_path: Path) -> None:
    ddl = "def schema():\n    return '''\n" + "CREATE TABLE t (x);\n" * 80 + "'''\n"
    long_logic = "def long():\n" + "    x = 1\n" * 60
    src = _write(
        tmp_path,
        {"trove/a.py": ddl + long_logic, "trove/big.py": "x = 1\n" * 500},
    )
    assert sizes.oversized(src) == ["trove/a.py: long (61)", "trove/big.py: module (500)"]
