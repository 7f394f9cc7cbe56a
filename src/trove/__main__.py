"""``python -m trove``: the ``trove`` command (runs this tree's code, whatever is on PATH)."""

from trove.interfaces.cli import main

main()
