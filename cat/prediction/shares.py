"""A pool's items on one scale, the share of the item's top score: for a 0/1 item the
chance of a right answer, for an item scored 0..m the expected score over m. The
predicted full-pool score of a model is the mean of these shares (its accuracy on a
pool of 0/1 items), so pools of mixed items keep the scale of the binary ones."""

from __future__ import annotations

import numpy as np

from irt.parameter_set import ParameterSet
from irt.types import FloatArray, IntArray


def expected_share(params: ParameterSet, theta: object) -> FloatArray:
    """E[X_j | θ] / m_j of every item at each θ, (T, J)."""
    if not params.scored:  # m_j = 1: the chance of a right answer itself
        return params.expected_score(theta)
    return np.asarray(params.expected_score(theta) / params.max_scores[None, :])


def share_variance(params: ParameterSet, theta: float) -> FloatArray:
    """Var[X_j | θ] / m_j² of every item at one θ, (J,): the chance spread of an answer
    not yet seen, on the share scale (a continuous score's own variance)."""
    variance: FloatArray = np.asarray(params.variance([theta])[0], dtype=np.float64)
    if not params.scored:
        return variance
    return np.asarray(variance / params.max_scores.astype(np.float64) ** 2)


def observed_share(params: ParameterSet, items: IntArray, responses: object) -> FloatArray:
    """The answers (0/1, or scores) to items at positions ``items`` as shares of the top
    score."""
    values = np.asarray(responses, dtype=np.float64)
    if not params.scored:
        return values
    return np.asarray(values / params.max_scores[np.asarray(items, dtype=np.int_)])
