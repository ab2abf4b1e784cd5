"""Difficulty drift between two periods: each item's b re-estimated from each period's
answers with its slope and floor kept, compared by a z-test, with one round of
purification.

With θ known (scored on the pool's scale from all of a subject's answers), b of item j
in a period is the mode of its likelihood times the calibration's normal prior on b
(which keeps an item that everyone got right finite); its standard error is the inverse
root of the curvature there. z = (b_later − b_earlier) / √(se_earlier² + se_later²).
An item that became much easier for the later subjects only — new models — is the
signature of questions leaking into training data.

θ is first scored from every item; then, as in DIF analysis (Candell & Drasgow, 1988),
re-scored without the items that drifted and the test repeated once, so that many
leaked items do not lift the later θ and hide themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from irt.fit.items import adjust_p_values
from irt.models import ItemParams
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from irt.types import BoolArray, FloatArray

#: b's normal prior (mean, SD) when the calibration had none: the default of ``ItemPriors``.
DEFAULT_B_PRIOR = (0.0, 2.0)
_STEPS = 50
_MAX_STEP = 1.0
_B_BOUND = 8.0


def difficulty_given_theta(
    right: FloatArray,
    observed: FloatArray,
    theta: FloatArray,
    params: ItemParams,
    prior_mean: float = DEFAULT_B_PRIOR[0],
    prior_sd: float = DEFAULT_B_PRIOR[1],
) -> tuple[FloatArray, FloatArray]:
    """(b, se) per item from (subjects, items) 0/1 ``right`` / ``observed`` at known
    ``theta``, keeping each item's a, c, d from ``params``."""
    a, c, d = params.a[None, :], params.c[None, :], params.d[None, :]
    t = np.asarray(theta, dtype=np.float64)[:, None]
    b = params.b.copy()
    info = np.zeros_like(b)
    for _ in range(_STEPS):
        s = 1.0 / (1.0 + np.exp(-a * (t - b[None, :])))
        p = np.clip(c + (d - c) * s, 1e-12, 1 - 1e-12)
        dp = -(d - c) * a * s * (1.0 - s)  # ∂P/∂b
        score = (observed * (right - p) / (p * (1 - p)) * dp).sum(axis=0)
        score -= (b - prior_mean) / prior_sd**2
        info = (observed * dp**2 / (p * (1 - p))).sum(axis=0) + 1.0 / prior_sd**2
        step = np.clip(score / info, -_MAX_STEP, _MAX_STEP)
        b = np.clip(b + step, -_B_BOUND, _B_BOUND)
        if np.abs(step).max() < 1e-6:
            break
    return b, 1.0 / np.sqrt(info)


@dataclass(frozen=True)
class DriftTest:
    """Per item: b in each period, z, the adjusted two-sided p (NaN where either period
    has too few answers), and how many items the final θ was scored on."""

    b_earlier: FloatArray
    b_later: FloatArray
    z: FloatArray
    p_adjusted: FloatArray
    tested: BoolArray
    scored_on_items: int


def drift_test(
    earlier: ResponseMatrix,
    later: ResponseMatrix,
    params: ItemParams,
    *,
    alpha: float = 0.05,
    correction: str = "bh",
    min_responses: int = 10,
    prior: tuple[float, float] = DEFAULT_B_PRIOR,
) -> DriftTest:
    """The module's test on two periods' answers to the items of ``params`` (both
    matrices on those items, in that order); ``prior`` is b's normal prior (mean, SD)."""
    anchor = np.ones(params.n_items, dtype=bool)
    test = _difficulty_change(earlier, later, params, anchor, prior, correction, min_responses)
    drifted = test.p_adjusted < alpha
    if drifted.any() and not drifted.all():
        test = _difficulty_change(
            earlier, later, params, ~drifted, prior, correction, min_responses
        )
    return test


def _difficulty_change(
    earlier: ResponseMatrix,
    later: ResponseMatrix,
    params: ItemParams,
    anchor: BoolArray,
    prior: tuple[float, float],
    correction: str,
    min_responses: int,
) -> DriftTest:
    estimates = []
    for period in (earlier, later):
        theta = score_abilities(
            period.subset(items=anchor), params.subset(anchor), AbilityMethod.EAP
        ).theta
        right = (period.values == 1).astype(np.float64)
        observed = period.observed.astype(np.float64)
        b, se = difficulty_given_theta(right, observed, theta, params, *prior)
        estimates.append((b, se, observed.sum(axis=0)))
    (b0, se0, n0), (b1, se1, n1) = estimates
    tested = (n0 >= min_responses) & (n1 >= min_responses)
    z = np.where(tested, (b1 - b0) / np.sqrt(se0**2 + se1**2), np.nan)
    p = adjust_p_values(np.where(tested, 2 * norm.sf(np.abs(z)), np.nan), correction)
    return DriftTest(b0, b1, z, p, tested, int(anchor.sum()))
