"""What the answers themselves support, when they do not follow the design's model.

A model whose answers ignore difficulty (``cat.designs.flatness``) makes every design
extrapolate from the wrong pattern. The fallback keeps only the items' order of
difficulty from the design: on the items asked, it fits

    logit P(right on item j) = α + β · logit p_j

with p_j the design's chance of a right answer at the end of the test (Cox's 1958
recalibration), and predicts each item not asked at σ(α + β · logit p_j). β = 1, α = 0 is
the design's own prediction; a model right at one rate on every item has β near 0, and
its prediction is then the share it got right, whatever the mix of items asked. The
interval holds the two coefficients' uncertainty (the accuracy's range over their 90%
confidence ellipse, from the normal approximation their Fisher information on the items
asked gives) and the chance in the answers not yet seen; it is wide when
the items asked span a narrow range of difficulty and the pool's items lie beyond it,
which the audit items (``cat.engine.audit``) keep from happening.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.prediction.intervals import Z90
from irt.types import BoolArray, FloatArray

_CLIP = 1e-4
# A whisper of ridge toward the design's own prediction (α = 0, β = 1): keeps the fit
# finite when every answer is right (or wrong), and moves nothing else.
_RIDGE = 1e-3
_STEPS = 50
#: The 90% point of χ² with 2 degrees of freedom: the confidence ellipse of (α, β).
_CHI2_2_90 = 4.605170185988091
#: Points on the unit circle the ellipse's edge is traced through.
_ANGLES = np.linspace(0.0, 2 * np.pi, 361)[:-1]
_ELLIPSE = np.column_stack([np.cos(_ANGLES), np.sin(_ANGLES)])


@dataclass(frozen=True)
class Recalibrated:
    """The fallback prediction of the full-pool accuracy, its 90% interval, and the
    fitted recalibration (``intercept`` α, ``slope`` β) it comes from."""

    value: float
    low: float
    high: float
    intercept: float
    slope: float


def _logit(p: FloatArray) -> FloatArray:
    q = np.clip(np.asarray(p, dtype=np.float64), _CLIP, 1 - _CLIP)
    return np.asarray(np.log(q / (1 - q)))


def fit_recalibration(eta: FloatArray, right: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(α, β) of the logistic fit of ``right`` (0/1) on ``eta``, and their 2 × 2
    covariance (the inverse of the penalised Fisher information), by Newton's method with
    step halving (the penalised log-likelihood is concave, so each halving ends)."""
    design = np.column_stack([np.ones_like(eta), eta])
    prior = np.array([0.0, 1.0])

    def objective(coef: FloatArray) -> float:
        z = design @ coef
        loglik = float(np.sum(right * z - np.logaddexp(0.0, z)))
        return loglik - 0.5 * _RIDGE * float(np.sum((coef - prior) ** 2))

    coef = prior.copy()
    current = objective(coef)
    for _ in range(_STEPS):
        p = _sigmoid(design @ coef)
        gradient = design.T @ (right - p) - _RIDGE * (coef - prior)
        step = np.linalg.solve(_information(design, p), gradient)
        scale = 1.0
        while scale > 1e-6:
            trial = coef + scale * step
            value = objective(trial)
            if value >= current:
                break
            scale /= 2
        else:
            break
        moved = float(np.max(np.abs(trial - coef)))
        coef, current = trial, value
        if moved < 1e-10:
            break
    covariance = np.linalg.inv(_information(design, _sigmoid(design @ coef)))
    return np.asarray(coef, dtype=np.float64), np.asarray(covariance, dtype=np.float64)


def _information(design: FloatArray, p: FloatArray) -> FloatArray:
    """The penalised Fisher information of the coefficients at chances ``p``."""
    return np.asarray((design * (p * (1 - p))[:, None]).T @ design + _RIDGE * np.eye(2))


@dataclass(frozen=True)
class RecalibratedRows:
    """(E,) each: the fallback prediction of each examinee and its 90% interval, as
    ``recalibrated_accuracy`` makes them; NaN where no item was asked."""

    value: FloatArray
    low: FloatArray
    high: FloatArray


def recalibrated_values(
    asked: BoolArray,
    right: FloatArray,
    chances: FloatArray,
    counted: BoolArray,
    intervals: bool = True,
) -> RecalibratedRows:
    """The fallback prediction with its interval of each examinee (rows of the (E, J)
    arguments), as ``recalibrated_accuracy`` makes them; without ``intervals`` the
    prediction alone (low and high NaN: the interval costs a few ms per examinee, which
    a cross-fit of every reference does not need)."""
    out = np.full((3, len(asked)), np.nan)
    for e in range(len(asked)):
        if not np.asarray(asked[e]).any():
            continue
        if intervals:
            fit = recalibrated_accuracy(asked[e], right[e], chances[e], counted[e])
            out[:, e] = fit.value, fit.low, fit.high
        else:
            out[0, e] = _point(asked[e], right[e], chances[e], counted[e])[0]
    return RecalibratedRows(out[0], out[1], out[2])


def _point(
    asked: BoolArray, right: FloatArray, chances: FloatArray, counted: BoolArray
) -> tuple[float, FloatArray, FloatArray, FloatArray, FloatArray, float]:
    """The prediction, the coefficients and their covariance, the unasked items' η and
    fitted chances, and the right answers counted."""
    asked = np.asarray(asked, dtype=bool)
    counted = np.asarray(counted, dtype=bool)
    eta = _logit(chances)
    x = (np.asarray(right, dtype=np.float64) > 0.5).astype(np.float64)
    coef, covariance = fit_recalibration(eta[asked], x[asked])
    rest = eta[counted & ~asked]
    q = _sigmoid(coef[0] + coef[1] * rest)
    known = float(x[counted & asked].sum())
    n = max(int(counted.sum()), 1)
    return (known + float(q.sum())) / n, coef, covariance, rest, q, known


def recalibrated_accuracy(
    asked: BoolArray, right: FloatArray, chances: FloatArray, counted: BoolArray | None = None
) -> Recalibrated:
    """The fallback accuracy over the ``counted`` items (all when None), (J,) each: the
    answers (``right``) where ``asked``, σ(α + β · logit ``chances``) elsewhere."""
    asked = np.asarray(asked, dtype=bool)
    counted = np.ones_like(asked) if counted is None else np.asarray(counted, dtype=bool)
    value, coef, covariance, rest, q, known = _point(asked, right, chances, counted)
    n = max(int(counted.sum()), 1)
    # The coefficients' uncertainty projected onto the accuracy: its least and greatest
    # value over their 90% confidence ellipse (normal approximation), which holds the
    # accuracy whenever the ellipse holds (α, β). Quantiles of the accuracy over draws
    # of (α, β) were too narrow for flat models (the pool's items lie beyond the range of
    # difficulty asked, where the prediction bends with β: flat models' intervals held
    # the truth 34 times in 40 at 250 items, 38 with the projection). The accuracy
    # rises with α everywhere, so its extremes over the ellipse lie on its edge.
    edge = coef + np.sqrt(_CHI2_2_90) * _ELLIPSE @ np.linalg.cholesky(covariance).T
    # The unasked items' η to 0.01 (a chance moves by under 0.002, and not one way): a
    # few hundred distinct values stand for thousands of items.
    levels, counts = np.unique(np.round(rest, 2), return_counts=True)
    values = (known + _sigmoid(edge[:, :1] + edge[:, 1:] * levels[None, :]) @ counts) / n
    low, high = float(values.min()), float(values.max())
    # The chance in the answers not yet seen, beside the coefficients' uncertainty.
    chance = Z90 * float(np.sqrt((q * (1 - q)).sum())) / n
    return Recalibrated(
        value=value,
        low=max(0.0, value - float(np.hypot(value - low, chance))),
        high=min(1.0, value + float(np.hypot(high - value, chance))),
        intercept=float(coef[0]),
        slope=float(coef[1]),
    )


def _sigmoid(z: FloatArray) -> FloatArray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -50.0, 50.0))))
