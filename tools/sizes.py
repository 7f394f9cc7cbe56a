"""Report the modules and functions past the house size limits (STYLE.md).

    python tools/sizes.py       # every module of 500 lines or more, every function of 60 or more

A function's length counts its lines from ``def`` to its last line, less the lines inside
string literals (docstrings and SQL DDL: a long schema is one statement, not long logic).
tests/test_sizes.py runs this in CI.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MODULE_LINES = 500
FUNCTION_LINES = 60

# Functions that are a table rather than logic, with the reason.
EXEMPT: dict[str, str] = {}


def _string_lines(node: ast.AST) -> set[int]:
    """Line numbers covered by multi-line string constants under ``node`` (not the first)."""
    lines: set[int] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.end_lineno:
            lines.update(range(sub.lineno + 1, sub.end_lineno + 1))
    return lines


def function_lengths(path: Path) -> dict[str, int]:
    """``qualified name`` -> length of every function and method in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = set(range(child.lineno, (child.end_lineno or child.lineno) + 1))
                found[prefix + child.name] = len(span - _string_lines(child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def oversized(src: Path = SRC) -> list[str]:
    """``path: what (lines)`` for every module and function past its limit."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines >= MODULE_LINES:
            out.append(f"{rel}: module ({lines})")
        for name, length in function_lengths(path).items():
            if length >= FUNCTION_LINES and f"{rel}: {name}" not in EXEMPT:
                out.append(f"{rel}: {name} ({length})")
    return out


def main() -> int:
    found = oversized()
    print("\n".join(found) or "every module and function within the limits")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
