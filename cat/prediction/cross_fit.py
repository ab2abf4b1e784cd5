"""How far the predicted accuracy of a reference model lands from its real accuracy when
the model was not in the calibration: errors stored in a pool, to widen ``cat assess``'s
interval by what θ alone cannot explain.

``cat assess`` predicts full-pool accuracy from one θ. Its interval from θ's uncertainty
and the chance in the unseen answers is too narrow for a model whose profile one θ does
not hold (on MMLU-Pro several models sit 5–7 points off). ``cat calibrate --pool
--cross-fit K`` replays every reference model's own answers through the adaptive test
with the pool calibrated on the other K − 1 folds (``cat.prediction.validation.validate``) and
stores the plug-in's signed errors per test length in ``pool.json``. ``cat assess``
then widens its interval to the split-conformal 90% half-width of those errors
(the ⌈(n + 1)·0.9⌉-th smallest absolute error of n references).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cat.errors import CatError
from cat.prediction.validation import PLUG_IN, validate
from irt.models import ModelKind
from irt.responses import ResponseMatrix
from itempool.prediction_errors import PredictionErrors


def cross_fit_errors(
    responses: ResponseMatrix,
    model: ModelKind | str,
    folds: int,
    lengths: list[int],
    seed: int,
    scenario: tuple[int, ...] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> PredictionErrors:
    """Replay every subject of ``responses`` with the pool calibrated on the other folds
    (MFI, content-balanced when ``scenario`` codes are given, ML θ) and return the
    plug-in's signed errors per length. ``progress(what, fraction done)`` follows the
    folds."""
    if responses.n_subjects < 2 * folds:
        raise CatError(
            f"--cross-fit {folds} needs at least {2 * folds} subjects, "
            f"the responses have {responses.n_subjects}"
        )
    policy = "mfi+cb" if scenario is not None else "mfi"
    lengths = sorted({min(length, responses.n_items) for length in lengths})
    predictions = validate(
        responses,
        model,
        [policy],
        lengths,
        np.random.default_rng(seed),
        holdout=None,
        scenario=scenario,
        folds=folds,
        progress=progress,
    )
    errors: dict[str, list[float]] = {}
    for p in predictions:
        if p.policy == policy and p.predictor == PLUG_IN:
            errors[str(p.length)] = [float(e) for e in p.predicted[0] - p.truth]
    return PredictionErrors(folds=folds, seed=seed, policy=policy, errors=errors)
