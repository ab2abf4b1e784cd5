"""Starting values for EM from classical item statistics."""

from __future__ import annotations

import numpy as np

from irt.design_blocks import DesignMatrices
from irt.estimation.arrays import empty, is_numpy, namespace, to_numpy, zeros
from irt.types import FloatArray

# Logistic slopes are ≈ 1.702 × normal-ogive slopes.
_OGIVE_TO_LOGISTIC = 1.702


def classical_start(
    design: DesignMatrices, guessing: float, slope_floor: float = 0.2
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(a, b, c) from proportions correct and item–total correlations (the sums over
    subjects where ``design`` holds the codes: the host, or a torch device).

    A subject's standing is its share right among the items it answered, so missing
    answers do not bias the correlations. With a lower asymptote ``guessing`` the
    proportion correct is first freed of the guessing floor. Two passes over the
    subjects' blocks: the counts, then the item–score covariances.
    """
    like = _float_like(design)
    n_right = zeros(design.n_items, like=like)
    n_item = zeros(design.n_items, like=like)
    score = empty(design.n_subjects, like=like)
    for block in design.blocks():
        n_right += block.right.sum(axis=0)
        if block.observed is None:
            n_item += block.right.shape[0]
            score[block.rows] = block.right.sum(axis=1) / max(design.n_items, 1)
        else:
            n_item += block.observed.sum(axis=0)
            answered = block.observed.sum(axis=1).clip(1.0, None)
            score[block.rows] = block.right.sum(axis=1) / answered
    p = (n_right + 0.5) / (n_item + 1.0)
    score_c = score - score.mean()
    # Item–score covariance over the subjects who answered each item.
    cross = zeros(design.n_items, like=like)
    for block in design.blocks():
        resid = block.right - p
        if block.observed is not None:
            resid *= block.observed
        cross += (resid * score_c[block.rows, None]).sum(axis=0)
    p, score_c, cross, n_item = (to_numpy(v) for v in (p, score_c, cross, n_item))
    cov = cross / np.maximum(n_item, 1.0)
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


def _float_like(design: DesignMatrices) -> FloatArray:
    """A float array where ``design`` keeps its codes, for the sums to be made there."""
    codes = design.codes
    if is_numpy(codes):
        return np.empty(0)
    return codes.new_empty(0, dtype=namespace(codes).float64)  # type: ignore[attr-defined,no-any-return]
