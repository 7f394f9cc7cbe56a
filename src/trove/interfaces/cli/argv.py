"""Global options anywhere on the command line: ``trove search x --db kb.db --json``.

click reads a group's options only before the command name. :func:`reorder` moves a
group option found after the command to the front, unless that command has an option
of the same name itself (``trove reembed --embedder`` is the command's own); and a
command's flag written before it (``trove --db kb.db --json stats``) to after it.
"""

from __future__ import annotations

import click

# Group options that take a value; moved as "--db VALUE" or "--db=VALUE".
GLOBAL_OPTIONS = ("--db", "--embedder")
# Commands' flags that read as global ones: written before the command, they are its.
COMMAND_FLAGS = ("--json",)


def reorder(group: click.Group, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with the group's options after the command moved before it."""
    position = _command_position(args)
    if position is None:
        return args
    command = group.get_command(ctx, args[position])
    own = _option_names(command) if command is not None else set()
    front, rest = args[:position], args[position:]
    flags = [a for a in front if a in COMMAND_FLAGS and a in own]
    if flags:
        front = [a for a in front if a not in flags]
        rest = rest[:1] + flags + rest[1:]
    moved: list[str] = []
    kept: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":  # everything after is the command's, verbatim
            kept.extend(rest[i:])
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_OPTIONS and name not in own:
            take = 1 if "=" in arg else 2
            moved.extend(rest[i : i + take])
            i += take
            continue
        kept.append(arg)
        i += 1
    return front + moved + kept


def _command_position(args: list[str]) -> int | None:
    """Index of the command name: the first word that is not a group option or its value."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in GLOBAL_OPTIONS:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return i
    return None


def _option_names(command: click.Command) -> set[str]:
    return {name for param in command.params for name in getattr(param, "opts", [])}
