"""A pool's items on one scale, the share of the item's top score: for a 0/1 item the
chance of a right answer, for an item scored 0..m the expected score over m. The
predicted full-pool score of a model is the mean of these shares (its accuracy on a
pool of 0/1 items), so pools of mixed items keep the scale of the binary ones."""

from __future__ import annotations

import numpy as np

from cat.engine.selection import PoolParams
from irt.mixed import MixedParams
from irt.models import ItemParams, probability
from irt.types import FloatArray, IntArray


def expected_share(params: PoolParams, theta: object) -> FloatArray:
    """E[X_j | θ] / m_j of every item at each θ, (T, J)."""
    if isinstance(params, ItemParams):
        return probability(theta, params)
    return np.asarray(params.expected_score(theta) / params.max_scores[None, :])


def share_variance(params: PoolParams, theta: float) -> FloatArray:
    """Var[X_j | θ] / m_j² of every item at one θ, (J,): the chance spread of an answer
    not yet seen, on the share scale (a continuous score's own variance)."""
    if isinstance(params, ItemParams):
        p = probability([theta], params)[0]
        return np.asarray(p * (1.0 - p))
    if isinstance(params, MixedParams):
        parts = [share_variance(params.discrete, theta)] if params.discrete is not None else []
        if params.continuous is not None:
            parts.append(params.continuous.variance([theta])[0])
        return np.concatenate(parts)
    prob = params.probabilities([theta])[0]  # (J, K)
    k = np.arange(prob.shape[1], dtype=np.float64)
    mean = prob @ k
    return np.asarray((prob @ k**2 - mean**2) / params.max_scores.astype(np.float64) ** 2)


def observed_share(params: PoolParams, items: IntArray, responses: object) -> FloatArray:
    """The answers (0/1, or scores) to items at positions ``items`` as shares of the top
    score."""
    values = np.asarray(responses, dtype=np.float64)
    if isinstance(params, ItemParams):
        return values
    return np.asarray(values / params.max_scores[np.asarray(items, dtype=np.int_)])
