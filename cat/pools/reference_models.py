"""The reference designs' models in a pool folder: the references' answers
(``reference_answers.csv.gz``) and their low-rank fit (``low_rank.csv`` with its prior in
``pool.json``), written by ``cat calibrate --pool`` and read by ``cat assess``."""

from __future__ import annotations

from typing import Any

import numpy as np

from cat.designs.low_rank import LowRankModel
from cat.designs.models import LOW_RANK_PENALTY, ReferenceModels
from cat.designs.references import reference_answers
from cat.errors import CatError
from irt.parameter_set import ParameterSet
from itempool import (
    REFERENCE_ANSWERS,
    LoadedPool,
    LowRankPrior,
    PoolFormatError,
    read_low_rank,
    read_reference_answers,
)


def low_rank_entry(model: LowRankModel) -> dict[str, Any]:
    """``pool.json``'s ``low_rank`` for ``model``."""
    prior = LowRankPrior(
        dims=model.dims,
        penalty=LOW_RANK_PENALTY,
        prior_mean=[float(x) for x in model.prior_mean],
        prior_covariance=[[float(x) for x in row] for row in model.prior_covariance],
    )
    return prior.model_dump()


def load_reference_models(pool: LoadedPool, params: ParameterSet) -> ReferenceModels:
    """The pool's references' answers and low-rank model, in the order of ``params``'s
    items; the low-rank model is refitted when the pool does not store it. ``CatError``
    when the pool keeps no answers."""
    try:
        answers = read_reference_answers(pool.dir, params.item_ids)
        prior = pool.manifest.low_rank
        stored = None if prior is None else read_low_rank(pool.dir, params.item_ids, prior.dims)
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc
    if answers is None:
        raise CatError(
            f"pool {pool.dir} keeps no reference answers ({REFERENCE_ANSWERS}), which the "
            "mixture and low-rank designs need: recalibrate it with cat calibrate --pool, "
            "or use --design irt"
        )
    if prior is None or stored is None:
        return ReferenceModels.fit(answers)
    intercepts, loadings = stored
    precision = np.linalg.inv(np.asarray(prior.prior_covariance, dtype=np.float64))
    model = LowRankModel(loadings, intercepts, np.asarray(prior.prior_mean), precision)
    return ReferenceModels(reference_answers(answers.values, answers.observed), model)
