"""The ``trove`` command line: one module per group of commands, each registering its
commands on the root group (:mod:`trove.interfaces.cli.root`) when imported.

Every command parses its options, calls one library method and prints (rich, or ``--json``).
"""

from __future__ import annotations

# Imported for their commands, which register themselves on the root group.
from trove.interfaces.cli import (  # noqa: F401
    agent,
    check,
    commands,
    edit,
    eval,
    ingest,
    listing,
    memory,
    migrate,
    serve,
    transfer,
)
from trove.interfaces.cli.root import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="trove")
