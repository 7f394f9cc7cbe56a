"""The ``trove`` command line: one module per group of commands, each registering its
commands on the root group (:mod:`trove.interfaces.cli.root`) when imported, which is
when a command line names one of them (``root.COMMANDS``): `trove --help` and each
command load only what they use.

Every command parses its options, calls one library method and prints (rich, or ``--json``).
"""

from __future__ import annotations

from trove.interfaces.cli.root import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="trove")
