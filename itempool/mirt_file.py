"""A pool's multidimensional model: ``mirt_params.csv`` (``itempool.formats.mirt_params``) and
``pool.json``'s ``multidimensional`` entry (structure, factors, correlation, fit).

A multidimensional pool keeps its unidimensional ``params.csv`` too: the reference
table, the other designs and every command that needs one θ still read that.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from irt.errors import IRTError
from irt.mirt_model import MirtParams, Structure
from itempool.formats.mirt_params import read_mirt_params
from itempool.problems import Problem

MIRT_PARAMS = "mirt_params.csv"


class MultidimensionalEntry(BaseModel):
    """``pool.json``'s ``multidimensional``: how ``mirt_params.csv`` is to be read and
    how it was fitted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    structure: Structure
    factors: list[str] = Field(min_length=1)
    correlation: list[list[float]]
    guessing: bool
    # The fit's figures beside the unidimensional model's (loglik, AIC, BIC, ...).
    fit: dict[str, Any] | None = None
    # What predictions take off each unasked item's expected score: the model's drift
    # on its references (irt.exploratory.scenario_factors).
    offset: float = 0.0
    # How the pool's design picks items (cat assess --criterion), as its stored
    # cross-fitted errors were measured; None: the design's default.
    criterion: str | None = None

    @model_validator(mode="after")
    def _shapes(self) -> MultidimensionalEntry:
        k = len(self.factors)
        corr = self.correlation
        if len(corr) != k or any(len(row) != k for row in corr):
            raise ValueError(f"the correlation must be {k} x {k}, one row per factor")
        if not all(math.isfinite(x) for row in corr for x in row):
            raise ValueError("the correlation must be finite")
        if len(set(self.factors)) != k:
            raise ValueError("factor names repeat")
        return self

    @classmethod
    def of(
        cls,
        params: MirtParams,
        fit: dict[str, Any] | None = None,
        offset: float = 0.0,
        criterion: str | None = None,
    ) -> MultidimensionalEntry:
        return cls(
            structure=params.structure,
            factors=list(params.factors),
            correlation=[[float(x) for x in row] for row in params.correlation],
            guessing=params.guessing,
            fit=fit,
            offset=offset,
            criterion=criterion,
        )


def check_mirt_params(
    folder: Path, entry: MultidimensionalEntry | None, item_ids: list[str] | None
) -> tuple[MirtParams | None, list[Problem]]:
    """The pool's multidimensional model in ``item_ids``' order (None when the pool has
    none) and what is wrong with it."""
    path = folder / MIRT_PARAMS
    if not path.is_file():
        if entry is not None:
            return None, [
                Problem("pool.json", None, f"multidimensional is set but {MIRT_PARAMS} is missing")
            ]
        return None, []
    if entry is None:
        return None, [
            Problem(MIRT_PARAMS, None, "pool.json has no multidimensional entry to read it by")
        ]
    try:
        params = read_mirt_params(
            path, entry.factors, np.asarray(entry.correlation), entry.structure
        )
    except IRTError as exc:
        return None, [Problem(MIRT_PARAMS, None, str(exc).removeprefix(f"{MIRT_PARAMS}: "))]
    problems = []
    if params.factors != tuple(entry.factors):
        problems.append(
            Problem(
                MIRT_PARAMS,
                None,
                f"its factors {list(params.factors)} are not pool.json's {entry.factors}",
            )
        )
    if params.guessing != entry.guessing:
        problems.append(
            Problem(MIRT_PARAMS, None, "its c column disagrees with pool.json's guessing")
        )
    if item_ids is None:
        return params, problems
    position = {item: j for j, item in enumerate(params.item_ids)}
    lacking = [item for item in item_ids if item not in position]
    extra = sorted(set(position) - set(item_ids))
    if lacking:
        problems.append(
            Problem(
                MIRT_PARAMS, None, f"no row for item {lacking[0]!r} ({len(lacking)} items lack one)"
            )
        )
    if extra:
        problems.append(Problem(MIRT_PARAMS, None, f"item {extra[0]!r} is not in items.jsonl"))
    if problems:
        return None, problems
    return params.subset(np.array([position[item] for item in item_ids])), []
