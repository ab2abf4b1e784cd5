"""EAP scores θ of the subjects of a mixed pool (``irt.mixed``) — discrete and continuous
items on one θ ~ N(prior_mean, prior_sd²) — by quadrature, as the families' own scorers
(``irt.polytomous_scoring``, ``irt.continuous_scoring``; R mirt's ``fscores``: 121
points on [−6, 6]).

Given θ the items are independent, so a subject's log-likelihood at each node is the sum
of its discrete part's and its continuous part's (missing answers contribute nothing);
the joint E-step of the calibrator (``irt.mixed_joint.joint_e_step``) turns it into the
posterior, whose mean and SD are the EAP and its posterior SD. A subject with no answer
gets the prior's mean and SD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.estimation.scoring import posterior_moments
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_joint import joint_e_step
from irt.mixed_se import ContinuousPart, DiscretePart
from irt.quadrature import prior_grid
from irt.types import FloatArray, IntArray

__all__ = ["MixedScores", "mixed_scores"]


@dataclass(frozen=True)
class MixedScores:
    """θ per subject (posterior mean), its posterior SD, and how many items each
    answered, in all and in each part."""

    subject_ids: tuple[str, ...]
    theta: FloatArray
    sd: FloatArray
    n_answered: IntArray
    n_discrete: IntArray
    n_continuous: IntArray


def mixed_scores(
    responses: MixedResponses,
    params: MixedParams,
    *,
    n_quad: int = 121,
    bound: float = 6.0,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> MixedScores:
    """EAP of θ and its posterior SD for every subject of ``responses`` under ``params``
    (the same items in the same parts); continuous scores clipped at
    ``params.continuous.epsilon``."""
    if not isinstance(responses, MixedResponses) or not isinstance(params, MixedParams):
        raise IRTError("mixed_scores needs MixedResponses and MixedParams")
    grid = prior_grid(n_quad, bound, prior_mean, prior_sd)
    if params.item_ids != responses.item_ids or params.discrete_ids != responses.discrete_ids:
        raise IRTError(
            "the responses and the parameters must list the same items in the same parts"
        )
    parts: list[DiscretePart | ContinuousPart] = []
    n = responses.n_subjects
    n_disc = n_cont = np.zeros(n, dtype=np.int_)
    if responses.discrete is not None and params.discrete is not None:
        parts.append(
            DiscretePart(responses.discrete, params.discrete, None, grid.points, grid.log_weights)
        )
        n_disc = responses.discrete.observed.sum(axis=1).astype(np.int_)
    if responses.continuous is not None and params.continuous is not None:
        parts.append(ContinuousPart(responses.continuous, params.continuous, None, grid.points))
        n_cont = responses.continuous.observed.sum(axis=1).astype(np.int_)
    post = joint_e_step(parts, [p.start() for p in parts], grid.log_weights).posterior
    mean, sd = posterior_moments(post, grid.points)
    return MixedScores(
        subject_ids=responses.subject_ids,
        theta=mean,
        sd=sd,
        n_answered=n_disc + n_cont,
        n_discrete=n_disc,
        n_continuous=n_cont,
    )
