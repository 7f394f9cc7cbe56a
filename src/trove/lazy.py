"""A module imported when one of its names is first used, not when a module naming it is.

``trove stats`` or a keyword search in a fresh process needs no numpy, yet about twenty
modules on the way to opening a store use it in some function; numpy's import alone cost a
one-shot command more than the rest of it (python bench/coldstart.py). Those modules write::

    if TYPE_CHECKING:
        import numpy as np
    else:
        from trove.lazy import numpy as np

so that type checkers see numpy itself and the code runs unchanged: ``np.zeros`` imports
numpy at its first call and is then an ordinary attribute look-up (the same pattern as
SPEC 1's lazy_loader, for one module).
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for module ``name``, importing it at the first attribute look-up."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self._lazy_name), attr)
        setattr(self, attr, value)  # later look-ups find it without this method
        return value

    def __repr__(self) -> str:
        return f"<module {self._lazy_name!r}, imported when first used>"


numpy = LazyModule("numpy")


def functions(namespace: dict[str, Any], module: str, *names: str) -> None:
    """Binds each of ``names`` in ``namespace`` (a module's ``globals()``) to a stand-in
    that, at its first call, imports ``module``, puts that module's function of the same
    name in its own place and calls it: later calls go straight to the function. For a
    module that calls a few functions of a heavy one by their bare names::

        if TYPE_CHECKING:
            from trove.backends.sqlite.word_index.fts import quote
        else:
            from trove import lazy

            lazy.functions(globals(), "trove.backends.sqlite.word_index.fts", "quote")
    """
    for name in names:
        namespace[name] = _first_call(namespace, module, name)


def _first_call(namespace: dict[str, Any], module: str, name: str) -> Any:
    def stand_in(*args: Any, **kwargs: Any) -> Any:
        function = getattr(importlib.import_module(module), name)
        namespace[name] = function
        return function(*args, **kwargs)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in
