"""``reference_answers.csv.gz``: the calibration's own response matrix (one row per
reference model, one column per item, empty where it did not answer), kept in the pool
so that the reference designs (``cat.designs``) can weigh a new model's answers against
the references' answers, not only against the item parameters."""

from __future__ import annotations

from pathlib import Path

from irt.errors import ResponseDataError
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from itempool.errors import PoolFormatError
from itempool.formats.responses import read_responses, write_csv, write_scored_csv

REFERENCE_ANSWERS = "reference_answers.csv.gz"


def write_reference_answers(matrix: ResponseMatrix | PolytomousResponses, pool_dir: Path) -> Path:
    """Store ``matrix`` (0/1 answers, or a scored pool's scores) in ``pool_dir``;
    returns the file written."""
    path = pool_dir / REFERENCE_ANSWERS
    try:
        if isinstance(matrix, PolytomousResponses):
            write_scored_csv(matrix, path)
        else:
            write_csv(matrix, path)
    except ResponseDataError as exc:
        raise PoolFormatError(f"{path}: {exc}") from exc
    return path


def read_reference_answers(pool_dir: Path, item_ids: tuple[str, ...]) -> ResponseMatrix | None:
    """The references' answers in the order of ``item_ids`` (the pool's calibrated
    items); None when the pool keeps none. Every item must have its column."""
    path = pool_dir / REFERENCE_ANSWERS
    if not path.is_file():
        return None
    try:
        matrix = read_responses(path)
    except ResponseDataError as exc:
        raise PoolFormatError(f"{path}: {exc}") from exc
    missing = sorted(set(item_ids) - set(matrix.item_ids))
    if missing:
        raise PoolFormatError(
            f"{path}: no answers to {len(missing)} calibrated item(s) (e.g. {missing[0]}); "
            "recalibrate the pool (cat calibrate --pool)"
        )
    return matrix.on_items(item_ids)
