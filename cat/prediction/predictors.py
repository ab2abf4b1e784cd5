"""Predicting a subject's accuracy on the items it was not given, from reference subjects.

With many references (hundreds of calibration models), a ridge regression across them —
from their answers on exactly the items this subject was given to their accuracy on the
rest — captures what a one-dimensional IRT model misses (the DESIGN.md prototype found it
far ahead of every IRT predictor there; with ~30 references it lost to the plug-in).
The penalty is chosen by exact leave-one-out error (closed form from the SVD).

The IRT plug-in itself is calibrated against the references too: Bayes-modal item
priors (above all the one on ``c``) and the one-dimensional fit make the model-expected
score at a subject's ML θ drift from its observed score by the same amount for nearly
every subject (on MMLU-Pro, 32 LLMs: +1.1 points for every reference, in sample and out).
``reference_offset`` measures that drift on the references and the plug-in subtracts it
from the model-expected part; on MMLU-Pro leave-one-out at 250 items it cut the MAE of
the plug-in from 2.1 to 1.5 points (benchmarks/bench_validate.py).
"""

from __future__ import annotations

import numpy as np

from cat.engine.selection import PoolParams
from cat.errors import CatError
from cat.prediction.shares import expected_share
from irt.types import BoolArray, FloatArray, IntArray

PENALTIES = np.logspace(-2, 4, 25)


def ridge_loo(x: FloatArray, y: FloatArray, x_new: FloatArray) -> tuple[float, float]:
    """Ridge prediction at ``x_new`` and its leave-one-out RMSE, the penalty chosen among
    ``PENALTIES`` by that LOO error. ``x`` (n, k), ``y`` (n,); an intercept is fitted."""
    n = len(y)
    if n < 3:
        raise CatError("ridge prediction needs at least 3 reference subjects")
    mx, my = x.mean(axis=0), float(y.mean())
    xc, yc = x - mx, y - my
    u, s, vt = np.linalg.svd(xc, full_matrices=False)
    uy = u.T @ yc
    best = (np.inf, my, 0.0)
    for lam in PENALTIES:
        shrink = s**2 / (s**2 + lam)
        fitted = u @ (shrink * uy)
        leverage = (u**2 * shrink).sum(axis=1) + 1.0 / n
        loo = float(np.sqrt(np.mean(((yc - fitted) / (1 - leverage)) ** 2)))
        if loo < best[0]:
            beta = vt.T @ (s / (s**2 + lam) * uy)
            best = (loo, my + float((x_new - mx) @ beta), loo)
    return best[1], best[2]


def ridge_accuracy(
    ref_values: FloatArray,
    ref_observed: BoolArray,
    given: IntArray,
    answers: FloatArray,
    answered: IntArray,
) -> float:
    """A subject's accuracy on all the items it ``answered``: its own ``answers`` on the
    ``given`` items plus the ridge prediction of its accuracy on the rest.

    ``ref_values``/``ref_observed`` are the references' answers (n, J) (1/0) and which
    they gave; a reference's missing answer to a given item is filled with the item's
    mean among the references.
    """
    rest = np.setdiff1d(answered, given)
    if rest.size == 0:
        return float(answers.mean()) if answers.size else float("nan")
    right = np.where(ref_observed, ref_values, np.nan)
    with np.errstate(invalid="ignore"):
        item_mean = np.nanmean(right[:, given], axis=0)
    item_mean = np.where(np.isnan(item_mean), 0.5, item_mean)
    x = np.where(ref_observed[:, given], ref_values[:, given], item_mean)
    n_rest = ref_observed[:, rest].sum(axis=1)
    usable = n_rest > 0
    y = np.nansum(right[:, rest], axis=1)[usable] / n_rest[usable]
    pred, _ = ridge_loo(x[usable], y, answers)
    rest_acc = float(np.clip(pred, 0.0, 1.0))
    return float((answers.sum() + rest_acc * rest.size) / answered.size)


def reference_offset(
    params: PoolParams,
    theta: FloatArray,
    accuracy: FloatArray,
    observed: BoolArray | None = None,
) -> float:
    """Mean over reference subjects of (model-expected accuracy at their θ − observed
    accuracy), per item: what the plug-in over-predicts by. On a pool of scored items,
    accuracy is the mean share of the top score (``cat.prediction.shares``).

    ``theta``/``accuracy`` (n,) are the references' abilities and observed accuracies;
    ``observed`` (n, J) marks the items each answered (all items when ``None``).
    """
    theta = np.asarray(theta, dtype=np.float64)
    accuracy = np.asarray(accuracy, dtype=np.float64)
    if theta.shape != accuracy.shape or theta.ndim != 1:
        raise CatError("reference abilities and accuracies must be two vectors of one length")
    usable = np.isfinite(theta) & np.isfinite(accuracy)
    if not usable.any():
        return 0.0
    prob = expected_share(params, theta[usable])
    if observed is None:
        expected = prob.mean(axis=1)
    else:
        mask = np.asarray(observed, dtype=bool)[usable]
        expected = (prob * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)
    return float(np.mean(expected - accuracy[usable]))
