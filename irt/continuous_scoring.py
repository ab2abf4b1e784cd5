"""EAP scores θ of the subjects of a continuous response matrix under a pool of
continuous items (``irt.continuous``), θ ~ N(prior_mean, prior_sd²), by quadrature as R
mirt's ``fscores`` (121 points on [−6, 6])."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_estep import ScoreData, check_match, e_step, params_internal
from irt.continuous_responses import ContinuousResponses
from irt.estimation.scoring import posterior_moments
from irt.quadrature import prior_grid
from irt.types import FloatArray, IntArray

__all__ = ["ContinuousScores", "continuous_scores"]


@dataclass(frozen=True)
class ContinuousScores:
    """θ per subject (posterior mean), its posterior SD, and how many items each
    answered (a subject with none gets the prior's mean and SD)."""

    subject_ids: tuple[str, ...]
    theta: FloatArray
    sd: FloatArray
    n_answered: IntArray


def continuous_scores(
    responses: ContinuousResponses,
    params: ContinuousParams,
    *,
    n_quad: int = 121,
    bound: float = 6.0,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> ContinuousScores:
    """EAP of θ and its posterior SD for every subject; scores clipped at
    ``params.epsilon``."""
    grid = prior_grid(n_quad, bound, prior_mean, prior_sd)
    check_match(responses, params)
    data = ScoreData.of(responses, params.is_crm, params.epsilon)
    post = e_step(data, params_internal(params), grid.points, grid.log_weights).posterior
    mean, sd = posterior_moments(post, grid.points)
    return ContinuousScores(
        subject_ids=responses.subject_ids,
        theta=mean,
        sd=sd,
        n_answered=responses.observed.sum(axis=1).astype(np.int_),
    )
