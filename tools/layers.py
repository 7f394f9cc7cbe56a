"""Draw trove's import graph from the source and report the cycles between layers.

    python tools/layers.py   # each cycle between layers, with the imports along it

A module's imports are read with ``ast`` (nothing is imported), wherever they stand: an
import inside a function or under ``if TYPE_CHECKING:`` hides a cycle from Python but not
from a reader, who still has to know the other module to follow this one. Modules are
grouped into layers (``LAYERS``), and a cycle is a set of layers each reachable from the
others. tests/test_layers.py runs this in CI.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Layer of a module: the longest prefix listed here wins; modules under no prefix are
# core (models, errors, ids, ...) and take part in no cycle check.
LAYERS = {
    "trove.search": "search",
    "trove.backends": "backends",
    "trove.store": "store",
    "trove.write": "write",
    "trove.embedders.vectorizer": "write",
    # A workspace is the store seen by one caller (its namespace, session and rights):
    # the store hands them out (Store.workspace) and they call the store back, so the two
    # are one layer; the write path, search and ingest below import neither.
    "trove.workspace": "store",
    "trove.store_writes": "store",  # the bodies of the store's write methods
    "trove.store_search": "store",  # the store's search pipeline, loaded at the first search
    "trove.ingest": "ingest",
    "trove.interfaces": "interfaces",
}

# Layers that must not form a cycle with one another: all of them, so imports point one
# way (interfaces -> store -> write path / ingest / search -> backends). Backends speak the
# search package's pure vocabulary (Filters, the query tree, BM25 constants, ranking
# helpers); search itself never imports a backend (hybrid search takes one as a Protocol).
CHECKED = (frozenset({"interfaces", "store", "write", "ingest", "search", "backends"}),)


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(src: Path = SRC) -> dict[str, Path]:
    return {module_name(p, src): p for p in sorted(src.rglob("*.py"))}


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The trove modules that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            subs = {f"{base}.{alias.name}" for alias in node.names} & known.keys()
            # ``from trove import writer`` imports trove.write; ``from trove.x import f``
            # imports trove.x.
            found.update(subs or {base})
    return {m for m in found if m in known and m != name}


def layer(module: str) -> str | None:
    best = max(
        (p for p in LAYERS if module == p or module.startswith(p + ".")), key=len, default=None
    )
    return LAYERS[best] if best else None


def graph(src: Path = SRC) -> dict[str, set[str]]:
    known = modules(src)
    return {name: imports(name, path, known) for name, path in known.items()}


def layer_edges(g: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(from layer, to layer) -> the module imports that make that edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for src, targets in g.items():
        for dst in sorted(targets):
            a, b = layer(src), layer(dst)
            if a and b and a != b:
                edges.setdefault((a, b), []).append(f"{src} -> {dst}")
    return edges


def _reach(edges: set[tuple[str, str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for a, b in edges:
            if a == node and b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def cycles(src: Path = SRC) -> list[tuple[frozenset[str], list[str]]]:
    """Each checked group's layers that form a cycle, with the imports along it."""
    edges = layer_edges(graph(src))
    found = []
    for group in CHECKED:
        inside = {e for e in edges if e[0] in group and e[1] in group}
        reach = {n: _reach(inside, n) for n in group}
        tangled = frozenset(
            n for n in group if any(n in reach[m] and m in reach[n] for m in group - {n})
        )
        if tangled:
            closing = [
                imp
                for (a, b), imps in sorted(edges.items())
                if a in tangled and b in tangled
                for imp in imps
            ]
            found.append((tangled, closing))
    return found


def main() -> int:
    found = cycles()
    for tangled, closing in found:
        print(f"cycle between {', '.join(sorted(tangled))}:")
        for imp in closing:
            print(f"  {imp}")
    if not found:
        print("no cycles between layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
