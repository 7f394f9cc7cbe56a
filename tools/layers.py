"""Draw trove's import graph from the source and check it against the layer table.

    python tools/layers.py   # the table, then every import that breaks it

A module's imports are read with ``ast`` (nothing is imported), wherever they stand: an
import inside a function or under ``if TYPE_CHECKING:`` hides a dependency from Python
but not from a reader, who still has to know the other module to follow this one. Every
module belongs to a layer (``LAYERS``), and a layer may import only the layers that
``ALLOWED`` lists for it (and itself), so imports point one way. Within that, the largest
set of modules that all reach one another (a strongly connected set) must stay small:
such a set can only be read all at once. No module outside ``trove.backends`` imports a
concrete backend, save ``trove.opening``, where ``trove.open`` picks one; the rest speak
to the protocol in ``trove.backends.base``. tests/test_layers.py runs this in CI.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Layer of a module: the longest prefix listed here wins (``trove`` alone places only the
# package's __init__). Every module must fall under one.
LAYERS = {
    # ``python -m trove``: the command line.
    "trove.__main__": "main",
    # What people and agents call: the CLI, HTTP, MCP, web, and framework adapters.
    "trove.interfaces": "interfaces",
    "trove.adapters": "interfaces",
    # The public names (``trove.open``, the types, ``trove.evaluate``), each loaded when
    # first used.
    "trove": "api",
    # Tasks over a whole store through its public API: evaluation, copying, import and
    # export, integrity checks, agents' probes, the live event feed.
    "trove.tools": "tasks",
    "trove.transfer": "tasks",
    "trove.check": "tasks",
    "trove.probe": "tasks",
    "trove.live": "tasks",
    # Where trove.open picks the backend and assembles a store: the only module above
    # the backends that names a concrete one.
    "trove.opening": "opening",
    # The public API (a facade) and the parts it hands its calls to: a caller's workspace,
    # the bodies of its writes and searches, ingest's target.
    "trove.store": "store",
    "trove.store_writes": "store",
    "trove.store_search": "store",
    "trove.store_ingest": "store",
    "trove.workspace": "store",
    # Operations on what a store holds, each given the parts it needs (a backend, the
    # events, the vectorizer), not the store: general ones (transactions, a document's
    # lifecycle, upsert, links), agent memories (use, duplicates, clusters), listing, the
    # agent loop, query expansion, agents' token bounds.
    "trove.operations": "operations",
    "trove.memory": "operations",
    "trove.listing": "operations",
    "trove.agent": "operations",
    "trove.enrich": "operations",
    "trove.expansion": "operations",
    "trove.rechunk": "operations",
    "trove.chunk_spans": "operations",
    "trove.limits": "operations",
    # Reading files and feeds into a target that writes them.
    "trove.ingest": "ingest",
    # The write path: chunk, embed (a caller's own vectors included), hand rows to the
    # backend in one transaction.
    "trove.write": "write",
    "trove.embedders.vectorizer": "write",
    "trove.memory.entry": "write",
    "trove.operations.own_vectors": "write",
    # What the operations and the store's own bodies need of a store, as protocols.
    "trove.parts": "write",
    # Rows and indexes: the protocol (backends.base) and the SQLite and PostgreSQL
    # packages, which speak the search package's vocabulary.
    "trove.backends": "backends",
    # Search that knows no backend: queries, filters, BM25, fusion, ranking, snippets;
    # hybrid search takes its retrievers as protocols.
    "trove.search": "search",
    # Models behind the store: embedders and the optional chat model.
    "trove.embedders": "models",
    "trove.llm": "models",
    # Values every layer shares, importing nothing above them.
    "trove.models": "core",
    "trove.hits": "core",
    "trove.errors": "core",
    "trove.ids": "core",
    "trove.lazy": "core",
    "trove.timeutil": "core",
    "trove.validate": "core",
    "trove.chunking": "core",
    "trove.events": "core",
    "trove.event_kinds": "core",
    "trove.expansion_counts": "core",
    "trove.rwlock": "core",
    "trove.originals": "core",
}

# The layers, top to bottom: each may import itself and layers below it.
ORDER = (
    "main",
    "interfaces",
    "api",
    "tasks",
    "opening",
    "store",
    "operations",
    "ingest",
    "write",
    "backends",
    "search",
    "models",
    "core",
)
# Below that, a few layers keep out of others that are beneath them:
KEPT_OUT = {
    # Interfaces parse, call the library, format: they never speak to a backend.
    "interfaces": ("backends",),
    # Ingest reads files into its Target protocol (the store hands it a StoreTarget); it
    # knows nothing of how the target chunks, embeds or searches.
    "ingest": ("write", "search", "models"),
    # Operations on what a store holds never run an ingest.
    "operations": ("ingest",),
}
ALLOWED: dict[str, tuple[str, ...]] = {
    name: tuple(b for b in ORDER[i + 1 :] if b not in KEPT_OUT.get(name, ()))
    for i, name in enumerate(ORDER)
}

# Modules that may import a concrete backend package.
CONCRETE = ("trove.backends.sqlite", "trove.backends.postgres")
MAY_NAME_CONCRETE = ("trove.backends", "trove.opening")
# Imports of a concrete backend that are known and owed a fix, each exactly (module,
# imported module): printed, not refused. trove check compares SQLite's word index with
# the chunks through a SQLite helper; it wants a backend capability, as enrichment and
# the event log have (backends.base.Enriching, LoggingEvents).
OWED: set[tuple[str, str]] = set()

# The most modules one strongly connected set may hold.
MAX_TANGLE = 3


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


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer(module: str, placed: Mapping[str, str] = LAYERS) -> str | None:
    # ``trove`` itself places only the package's __init__, so a new module is placed by
    # its author, not by default.
    best = max(
        (p for p in placed if module == p or ("." in p and _under(module, p))),
        key=len,
        default=None,
    )
    return placed[best] if best else None


def graph(src: Path = SRC) -> dict[str, set[str]]:
    known = modules(src)
    return {name: imports(name, path, known) for name, path in known.items()}


def tangles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of modules (Tarjan's algorithm), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        # Iterative: each frame is a module and the targets it has yet to visit.
        frames = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while frames:
            node, todo = frames[-1]
            step = next(todo, None)
            if step is not None and step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                frames.append((step, iter(sorted(g.get(step, ())))))
            elif step is not None:
                if step in stack:
                    low[node] = min(low[node], index[step])
            else:
                frames.pop()
                if frames:
                    low[frames[-1][0]] = min(low[frames[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        top = stack.pop()
                        group.append(top)
                        if top == node:
                            break
                    found.append(sorted(group))
    return sorted(found, key=lambda s: (-len(s), s))


def problems(
    src: Path = SRC,
    placed: Mapping[str, str] = LAYERS,
    allowed: Mapping[str, tuple[str, ...]] = ALLOWED,
) -> list[str]:
    """Every way the source breaks the table, one line each (none: it holds)."""
    g = graph(src)
    found = [f"{m}: in no layer" for m in sorted(g) if layer(m, placed) is None]
    found += [f"{p}: placed in LAYERS but no such module" for p in sorted(placed) if p not in g]
    for a, targets in sorted(g.items()):
        for b in sorted(targets):
            la, lb = layer(a, placed), layer(b, placed)
            if la and lb and la != lb and lb not in allowed[la]:
                found.append(f"{a} -> {b}: {la} may not import {lb}")
            if (
                any(_under(b, c) for c in CONCRETE)
                and not any(_under(a, m) for m in MAY_NAME_CONCRETE)
                and (a, b) not in OWED
            ):
                found.append(f"{a} -> {b}: only trove.opening names a concrete backend")
    found += [
        f"{a} -> {b}: owed no more, drop it from OWED" for a, b in OWED if b not in g.get(a, {b})
    ]
    biggest = tangles(g)[0] if g else []
    if len(biggest) > MAX_TANGLE:
        found.append(
            f"{len(biggest)} modules import one another (at most {MAX_TANGLE}): "
            + ", ".join(biggest)
        )
    return found


def table() -> str:
    order = list(ALLOWED)
    width = max(map(len, order))
    lines = [f"{'layer':<{width}}  may import"]
    lines += [f"{name:<{width}}  {', '.join(ALLOWED[name]) or '-'}" for name in order]
    return "\n".join(lines)


def main() -> int:
    print(table())
    print()
    largest = tangles(graph())[0]
    print(f"largest strongly connected set: {len(largest)} ({', '.join(largest)})")
    for a, b in sorted(OWED):
        print(f"owed: {a} -> {b} names a concrete backend")
    found = problems()
    for line in found:
        print(line)
    if not found:
        print("every module placed; every import points down the table")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
