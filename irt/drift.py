"""Difficulty drift between two periods: each item's b re-estimated from each period's
answers with its slope and floor kept, compared by a z-test.

With θ known (scored on the pool's scale from all of a subject's answers), b of item j
in a period is the mode of its likelihood times the calibration's normal prior on b
(which keeps an item that everyone got right finite); its standard error is the inverse
root of the curvature there. z = (b_later − b_earlier) / √(se_earlier² + se_later²).
An item that became much easier for the later subjects only — new models — is the
signature of questions leaking into training data.
"""

from __future__ import annotations

import numpy as np

from irt.models import ItemParams
from irt.types import FloatArray

_STEPS = 50
_MAX_STEP = 1.0
_B_BOUND = 8.0


def difficulty_given_theta(
    right: FloatArray,
    observed: FloatArray,
    theta: FloatArray,
    params: ItemParams,
    prior_mean: float = 0.0,
    prior_sd: float = 2.0,
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
