"""Commands that other packages add to ``cat``: entry points of the group ``cat.commands``.

A distribution declares one in its ``pyproject.toml``; this project does so for the
offline demo::

    [project.entry-points."cat.commands"]
    demo = "catdemo.command:demo"

and ``cat demo`` then runs ``catdemo.command.demo``, a typer command function registered
under the entry point's name. So ``cat`` reaches ``catdemo``, which imports ``cat``,
without importing it (tests/cat/test_layers.py).

The entry points are read from the installed distributions' ``entry_points.txt`` with
``os`` alone, in ``sys.path`` order, the first distribution of a name winning (as
``importlib.metadata.entry_points`` finds them). ``importlib.metadata`` itself would cost
about 10 ms to import, a tenth of ``cat --help``, and the console script's routing
(``cat._entry``) reads the names too, before it decides to load anything.
"""

from __future__ import annotations

import functools
import os
import sys

# A plain name rather than ``typing.TYPE_CHECKING`` (as in ``cat/__init__.py``): the
# console script's routing imports this module, and ``typing`` costs it 2 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

#: The entry-point group of ``cat``'s commands.
GROUP = "cat.commands"

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


@functools.cache
def plugin_commands() -> dict[str, str]:
    """Each added command's name and its ``module:function``, in the order found."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    for entry in sys.path:
        for distribution, folder in _metadata_folders(entry or os.curdir):
            if distribution in seen:
                continue
            seen.add(distribution)
            for name, target in _group_entries(os.path.join(folder, "entry_points.txt")):
                found.setdefault(name, target)
    return found


def load_command(target: str) -> Callable[..., Any]:
    """The function that ``target`` (``module:function``) names, its module imported."""
    import importlib

    module_name, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module_name.strip())
    for part in attribute.strip().split("."):
        value = getattr(value, part)
    if not callable(value):
        raise TypeError(f"{target} is not a function")
    return value  # type: ignore[no-any-return]


def _metadata_folders(path: str) -> Iterator[tuple[str, str]]:
    """(normalised distribution name, folder) of each distribution's metadata in ``path``."""
    try:
        entries = sorted(os.listdir(path))
    except OSError:  # a zip file, a missing folder
        return
    for name in entries:
        if name.endswith(_METADATA_SUFFIXES):
            distribution = name.rsplit(".", 1)[0].split("-", 1)[0]
            yield distribution.lower().replace("-", "_").replace(".", "_"), os.path.join(path, name)


def _group_entries(path: str) -> Iterator[tuple[str, str]]:
    """(name, target) of each entry point of ``GROUP`` in the ``entry_points.txt`` at
    ``path`` (an INI file: ``[group]`` headers, ``name = module:function [extras]``)."""
    try:
        with open(path, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError:  # no entry points in this distribution
        return
    section = None
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line:
            name, _, target = line.partition("=")
            yield name.strip(), target.split("[", 1)[0].strip()
