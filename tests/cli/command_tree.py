"""The ``cat`` application's commands as click builds them, for tests that go through
every command (help, examples)."""

from __future__ import annotations

from collections.abc import Iterator

from typer._click import Command
from typer.main import get_command

from cat.cli.app import app


def _paths(command: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _paths(sub, (*path, name))


#: The application itself.
ROOT = get_command(app)
#: Every command's path from the root (``()``, ``("pool", "info")``, ...), sorted.
COMMAND_PATHS = list(_paths(ROOT))


def command_at(path: tuple[str, ...]) -> Command:
    """The command at ``path``."""
    command = ROOT
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command
