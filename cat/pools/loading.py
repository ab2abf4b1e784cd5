"""``cat``'s door to the pool format: ``itempool.load_pool`` with its errors as ``CatError``."""

from __future__ import annotations

import os
from pathlib import Path

from cat.arguments import PathArg, api_errors, as_path
from cat.engine.pool_params import calibrated_params
from cat.errors import CatError
from irt.models import ItemParams
from itempool import LoadedPool, PoolFormatError, QuestionSet
from itempool import load_pool as _load_pool
from itempool import read_questions as _read_questions
from itempool.loader import pool_folder_problem

__all__ = [
    "as_pool",
    "binary_params",
    "check_output_folders",
    "load_pool",
    "output_file_problem",
    "output_folder_problem",
    "pool_folder_problem",
    "read_pool_questions",
]


@api_errors
def load_pool(pool_dir: PathArg) -> LoadedPool:
    """Read and check the pool in ``pool_dir`` (a str or path; ``itempool.load_pool``),
    or the pool of that name (``"mmlu-pro"``: a folder of ``$CAT_POOL_PATH`` or the
    repository's ``item_pools/``, ``itempool.shipped``); every problem is a ``CatError``
    naming the file and line."""
    return _load_pool(as_path(pool_dir, "pool_dir"))


def as_pool(pool: LoadedPool | PathArg, argument: str = "pool") -> LoadedPool:
    """``pool`` itself, or the pool loaded from that folder (a str or path) or of that
    name (``load_pool``)."""
    if isinstance(pool, LoadedPool):
        return pool
    if not isinstance(pool, str | os.PathLike):
        raise CatError(
            f"{argument} must be a pool (cat.load_pool) or its folder, got {type(pool).__name__}"
        )
    return load_pool(as_path(pool, argument))


def recorded_pool(path: str, name: str, version: str | None, whose: str) -> LoadedPool:
    """The pool a RESULT.json was assessed on: at the folder it records (relative to
    where that run was made), else a pool found by name (``itempool.shipped``: its
    folder's name, then the pool's own) with the same name and version, so that results
    read from another folder still find a shipped or ``$CAT_POOL_PATH`` pool. ``whose``
    names the result in the error, which asks for ``--pool``."""
    from itempool.checks import MANIFEST
    from itempool.shipped import resolve_pool

    candidates = [Path(path)]
    for pool_name in (Path(path).name, name):
        found = resolve_pool(pool_name)
        if (found / MANIFEST).is_file() and found not in candidates:
            candidates.append(found)
    for folder in candidates:
        if not folder.is_dir():
            continue
        loaded = load_pool(folder)
        if (loaded.manifest.name, loaded.manifest.version) == (name, version):
            return loaded
    raise CatError(
        f"the pool of {whose} is not at {path} (moved, or assessed in another folder or "
        f"on another machine) and no pool {name} (version {version}) is found by name: "
        "give its folder (--pool DIR)"
    )


def read_pool_questions(pool_dir: str | Path) -> QuestionSet:
    """The pool's manifest and questions under the same checks (``itempool.read_questions``;
    params.csv and reference.jsonl are not read), errors as ``CatError``."""
    try:
        return _read_questions(pool_dir)
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc


def binary_params(pool: LoadedPool, command: str) -> ItemParams:
    """The pool's 0/1 item parameters for ``command``, which has no version for scored
    items yet: ``CatError`` naming it on a pool of scored items."""
    params = calibrated_params(pool)
    if params.scored:
        raise CatError(
            f"{command} works on pools of 0/1 items; pool {pool.dir} holds scored items "
            "(graded, partial-credit or open)"
        )
    return params


def check_output_folders(*paths: Path | None) -> None:
    """Fail before any work if an output file cannot be written: it is an existing folder,
    or its folder does not exist (``output_file_problem``; None: no such output)."""
    for path in paths:
        problem = None if path is None else output_file_problem(path)
        if problem is not None:
            raise CatError(f"cannot write {path}: {problem}")


def output_file_problem(path: Path, *, makes_folders: bool = False) -> str | None:
    """Why a file cannot be written at ``path``, or None: an existing folder is there, or
    its folder does not exist; for a writer that makes missing folders
    (``makes_folders``), a file stands where one of them would go."""
    if path.is_dir():
        return "a folder, not a file"
    if makes_folders:
        return _blocked_folder(path.parent)
    if path.parent.exists() and not path.parent.is_dir():
        return f"{path.parent} is a file, not a folder"
    if not path.parent.is_dir():
        return f"folder {path.parent} does not exist"
    return None


def output_folder_problem(path: Path) -> str | None:
    """Why a folder cannot be made (with its parents) or written into at ``path``, or
    None: a file is there, or where one of its parents would go."""
    if path.exists() and not path.is_dir():
        return "not a folder"
    return _blocked_folder(path)


def _blocked_folder(folder: Path) -> str | None:
    # mkdir(parents=True) succeeds if the nearest existing ancestor is a folder.
    for ancestor in (folder, *folder.parents):
        if ancestor.exists():
            return (
                None if ancestor.is_dir() else f"cannot make folder {folder}: {ancestor} is a file"
            )
    return None
