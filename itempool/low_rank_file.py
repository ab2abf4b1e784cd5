"""``low_rank.csv`` and ``pool.json``'s ``low_rank``: the references' K-factor logistic
model (``irt.exploratory.low_rank``), stored so that ``cat assess`` need not refit it (a
fit on 1,000 references x 1,500 items takes tens of seconds).

``low_rank.csv`` has one row per item: ``item_id,intercept,f1..fK``. ``pool.json``'s
``low_rank`` holds K, the penalty and the prior of a new model's factors (the
references' mean and covariance of theirs).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from irt.types import FloatArray
from itempool.atomic import atomic_text_file
from itempool.errors import PoolFormatError

LOW_RANK = "low_rank.csv"


class LowRankPrior(BaseModel):
    """``pool.json``'s ``low_rank``: K, the penalty and the prior of a new model's factors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dims: int = Field(ge=1)
    penalty: float = Field(gt=0)
    prior_mean: list[float]
    prior_covariance: list[list[float]]

    @model_validator(mode="after")
    def _shapes(self) -> LowRankPrior:
        k = self.dims
        cov = self.prior_covariance
        if len(self.prior_mean) != k or len(cov) != k or any(len(row) != k for row in cov):
            raise ValueError(f"the prior needs a mean of {k} and a {k} x {k} covariance")
        if not all(math.isfinite(x) for row in cov for x in row):
            raise ValueError("the prior covariance must be finite")
        return self


def write_low_rank(
    pool_dir: Path, item_ids: tuple[str, ...], intercepts: FloatArray, loadings: FloatArray
) -> Path:
    """Write each item's intercept and loadings to ``low_rank.csv``; returns the path."""
    path = pool_dir / LOW_RANK
    k = loadings.shape[1]
    with atomic_text_file(path) as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "intercept", *(f"f{d + 1}" for d in range(k))])
        for item, b, v in zip(item_ids, intercepts, loadings, strict=True):
            out.writerow([item, repr(float(b)), *(repr(float(x)) for x in v)])
    return path


def read_low_rank(
    pool_dir: Path, item_ids: tuple[str, ...], dims: int
) -> tuple[FloatArray, FloatArray] | None:
    """(intercepts (J,), loadings (J, K)) in the order of ``item_ids``; None without the
    file. Every item needs its row of K finite numbers."""
    path = pool_dir / LOW_RANK
    if not path.is_file():
        return None
    rows: dict[str, list[float]] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or header[:2] != ["item_id", "intercept"] or len(header) != dims + 2:
            raise PoolFormatError(
                f"{path} line 1: expected item_id,intercept,f1..f{dims} (pool.json says "
                f"{dims} factors)"
            )
        for line, cells in enumerate(reader, start=2):
            try:
                values = [float(x) for x in cells[1:]]
            except ValueError:
                raise PoolFormatError(f"{path} line {line}: not a number") from None
            if len(values) != dims + 1 or not all(math.isfinite(x) for x in values):
                raise PoolFormatError(f"{path} line {line}: need {dims + 1} finite numbers")
            rows[cells[0]] = values
    missing = [item for item in item_ids if item not in rows]
    if missing:
        raise PoolFormatError(f"{path}: no row for {len(missing)} item(s) (e.g. {missing[0]})")
    table = np.array([rows[item] for item in item_ids], dtype=np.float64)
    return table[:, 0], table[:, 1:]
