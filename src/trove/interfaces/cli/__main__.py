"""``python -m trove.interfaces.cli``: the ``trove`` command."""

from trove.interfaces.cli import main

main()
