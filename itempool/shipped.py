"""Pools by name: ``--pool mmlu-pro`` where no folder ``mmlu-pro`` is at hand.

A pool argument that is an existing path is that folder, as always. A bare name (no
folder part) that is not one is looked up in the folders of ``$CAT_POOL_PATH``
(``os.pathsep``-separated), then in the repository's ``item_pools/`` (found from this
package's own location, as ``cat demo`` finds ``item_pools/demo-open``); the first
folder of that name holding a ``pool.json`` is the pool. ``itempool.load_pool``,
``check_pool`` and ``read_questions`` resolve their argument so, and so every command
and ``cat.load_pool`` that reads a pool does. Writers (``cat calibrate --pool``) take
folders only: a name never sends a write into a shipped pool.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from itempool.checks import MANIFEST

__all__ = [
    "POOL_PATH_ENV",
    "SHIPPED_POOLS",
    "is_pool_name",
    "pool_search_path",
    "resolve_pool",
    "shipped_pools",
    "unknown_pool_note",
]

#: The environment variable listing folders of pools, searched before ``item_pools/``.
POOL_PATH_ENV: Final = "CAT_POOL_PATH"
#: The repository's ``item_pools/``, beside the package.
SHIPPED_POOLS: Final = Path(__file__).resolve().parents[1] / "item_pools"


def pool_search_path() -> list[Path]:
    """The folders searched for a pool by name, in order: ``$CAT_POOL_PATH``'s, then
    ``item_pools/``."""
    listed = os.environ.get(POOL_PATH_ENV, "")
    folders = [Path(part).expanduser() for part in listed.split(os.pathsep) if part.strip()]
    return [*folders, SHIPPED_POOLS]


def shipped_pools() -> dict[str, Path]:
    """Every pool findable by name (a folder holding ``pool.json``), by name; where two
    search folders hold the same name, the earlier one's."""
    found: dict[str, Path] = {}
    for folder in pool_search_path():
        try:
            entries = sorted(folder.iterdir())
        except OSError:  # a listed folder that is not there is no error
            continue
        for entry in entries:
            if entry.name not in found and (entry / MANIFEST).is_file():
                found[entry.name] = entry
    return found


def is_pool_name(pool: str | os.PathLike[str]) -> bool:
    """Whether ``pool`` is a bare name (no folder part, not ``.`` or ``..``)."""
    text = os.fspath(pool)
    separators = {os.sep, os.altsep or os.sep, "/"}
    return bool(text) and text not in (".", "..") and not any(s in text for s in separators)


def resolve_pool(pool: str | os.PathLike[str]) -> Path:
    """The folder ``pool`` names: ``pool`` itself when it exists or is not a bare name,
    else the first pool of that name on the search path (``pool`` itself when there is
    none: the reader then says the folder is missing, with the pools it could have
    meant, ``unknown_pool_note``)."""
    path = Path(pool)
    if path.exists() or not is_pool_name(pool):
        return path
    for folder in pool_search_path():
        candidate = folder / path.name
        if (candidate / MANIFEST).is_file():
            return candidate
    return path


def unknown_pool_note(pool: str | os.PathLike[str]) -> str | None:
    """For a bare name that names no folder and no pool: the pools there are, to say
    beside "no such folder"; None for a path."""
    if Path(pool).exists() or not is_pool_name(pool):
        return None
    names = ", ".join(shipped_pools()) or "none"
    return f"nor a pool of that name in ${POOL_PATH_ENV} or item_pools/ (there: {names})"
