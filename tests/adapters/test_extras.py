"""Without its framework installed, an adapter's import names the extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

import trove


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("trove.adapters.")]:
        monkeypatch.delitem(sys.modules, name)
    # The frameworks as if not installed (None in sys.modules makes an import fail).
    for name in list(sys.modules):
        if name.startswith(("langchain_core", "llama_index")):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.setitem(sys.modules, "llama_index", None)
    with pytest.raises(trove.MissingDependency, match=r"pip install 'trove\[langchain\]'"):
        importlib.import_module("trove.adapters.langchain")
    with pytest.raises(trove.MissingDependency, match=r"pip install 'trove\[llamaindex\]'"):
        importlib.import_module("trove.adapters.llamaindex")
