"""Starting values for EM from classical item statistics."""

from __future__ import annotations

import numpy as np

from irt.estep import DesignMatrices
from irt.types import FloatArray

# Logistic slopes are ≈ 1.702 × normal-ogive slopes.
_OGIVE_TO_LOGISTIC = 1.702


def classical_start(
    design: DesignMatrices, guessing: float, slope_floor: float = 0.2
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(a, b, c) from proportions correct and item–total correlations.

    A subject's standing is its share right among the items it answered, so missing
    answers do not bias the correlations. With a lower asymptote ``guessing`` the
    proportion correct is first freed of the guessing floor.
    """
    right = design.right
    observed = np.ones_like(right) if design.observed is None else design.observed
    n_item = observed.sum(axis=0)
    p = (right.sum(axis=0) + 0.5) / (n_item + 1.0)
    n_subj = np.maximum(observed.sum(axis=1), 1.0)
    score = right.sum(axis=1) / n_subj
    score_c = score - score.mean()
    # Item–score covariance over the subjects who answered each item.
    resid = (right - p) * observed
    cov = (resid * score_c[:, None]).sum(axis=0) / np.maximum(n_item, 1.0)
    sd_item = np.sqrt(p * (1 - p))
    sd_score = max(float(score_c.std()), 1e-6)
    r = np.clip(cov / (sd_item * sd_score), -0.95, 0.95)
    a = np.clip(_OGIVE_TO_LOGISTIC * r / np.sqrt(1 - r**2), slope_floor, 4.0)
    c = np.full(p.shape, guessing)
    p_star = np.clip((p - c) / (1 - c), 0.02, 0.98)
    # Marginal P(correct) of a 2PL item under N(0,1) ≈ Φ-ish logit(p)/sqrt(1 + (a/1.702)²).
    intercept = np.log(p_star / (1 - p_star)) * np.sqrt(1 + (a / _OGIVE_TO_LOGISTIC) ** 2)
    b = -intercept / a
    return a, b, c
