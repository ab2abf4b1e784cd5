"""``cat``'s door to the pool format: ``itempool.load_pool`` with its errors as ``CatError``."""

from __future__ import annotations

from pathlib import Path

from cat.errors import CatError
from irt.mixed import MixedParams
from irt.models import ItemParams
from irt.polytomous import PolytomousParams
from itempool import LoadedPool, PoolFormatError, QuestionSet
from itempool import load_pool as _load_pool
from itempool import read_questions as _read_questions


def load_pool(pool_dir: str | Path) -> LoadedPool:
    """Read and check the pool in ``pool_dir`` (``itempool.load_pool``); every problem is
    a ``CatError`` naming the file and line."""
    try:
        return _load_pool(pool_dir)
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc


def read_pool_questions(pool_dir: str | Path) -> QuestionSet:
    """The pool's manifest and questions under the same checks (``itempool.read_questions``;
    params.csv and reference.jsonl are not read), errors as ``CatError``."""
    try:
        return _read_questions(pool_dir)
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc


def calibrated_params(pool: LoadedPool) -> ItemParams | PolytomousParams | MixedParams:
    """The pool's item parameters (scored items' on a pool of them, with continuous
    items' on a mixed pool); ``CatError`` if the pool is not calibrated yet."""
    if pool.params is None:
        raise CatError(
            f"pool {pool.dir} has no params.csv: calibrate it first (cat calibrate --pool)"
        )
    return pool.params


def binary_params(pool: LoadedPool, command: str) -> ItemParams:
    """The pool's 0/1 item parameters for ``command``, which has no version for scored
    items yet: ``CatError`` naming it on a pool of scored items."""
    params = calibrated_params(pool)
    if not isinstance(params, ItemParams):
        raise CatError(
            f"{command} works on pools of 0/1 items; pool {pool.dir} holds scored items "
            "(graded, partial-credit or open)"
        )
    return params


def check_output_folders(*paths: Path | None) -> None:
    """Fail before any work if an output's folder does not exist."""
    for path in paths:
        if path is not None and not path.parent.is_dir():
            raise CatError(f"cannot write {path}: folder {path.parent} does not exist")
