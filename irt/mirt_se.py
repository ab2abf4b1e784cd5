"""Item standard errors of the multidimensional 2PL/3PL from the cross-product (XPD) of
per-subject scores, item by item, as ``irt.item_se`` does for one factor.

Subject i's score for item j's coordinates η_j = (a_j, d_j[, γ_j]) is the posterior
expectation of the complete-data score (Louis 1982; Fisher's identity):

    s_ij = y_ij Σ_q post_iq ∂P_jq/∂η / P_jq − (1 − y_ij) Σ_q post_iq ∂P_jq/∂η / (1 − P_jq)

for an answered item, 0 otherwise. Σ_i s_ij s_ijᵀ estimates item j's information block
(R mirt's ``SE.type = "crossprod"``); the prior's curvature is added and the block of
the free coordinates is inverted item by item, ignoring covariances between items and
with the factor correlations. c's standard error follows from γ = logit(c) by the delta
method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.estimation.observed_information import invert_item_blocks, root_variance
from irt.families.coordinates import sigmoid
from irt.mirt_estep import Patterns, item_log_probs, log_weights, posterior_chunks
from irt.mirt_model import MirtParams
from irt.mirt_mstep import MirtPriors
from irt.types import FloatArray


@dataclass(frozen=True)
class MirtStandardErrors:
    """Standard errors of the slopes (items × factors), intercepts and, in the 3PL, the
    lower asymptotes; NaN where a parameter is fixed or its block is singular."""

    slopes: FloatArray
    d: FloatArray
    c: FloatArray | None = None


def item_standard_errors(
    data: Patterns, params: MirtParams, points: FloatArray, priors: MirtPriors | None = None
) -> MirtStandardErrors:
    """XPD standard errors at ``params`` (normally the fitted ones)."""
    k, n_items = params.n_factors, params.n_items
    log_p, log_q = item_log_probs(params, points)
    prob, comp = np.exp(log_p), np.exp(log_q)
    z = params.slopes @ points.T + params.d[:, None]
    sigma = sigmoid(z)
    c = np.zeros((n_items, 1)) if params.c is None else params.c[:, None]
    dz = (1 - c) * sigma * (1 - sigma)  # ∂P/∂z, (J, Q)
    cols = np.vstack([points.T, np.ones(points.shape[0])])  # (K + 1, Q)
    derivs = [dz * col for col in cols]
    if params.c is not None:
        derivs.append((1 - sigma) * c * (1 - c))  # ∂P/∂γ
    n_coords = len(derivs)
    info = np.zeros((n_items, n_coords, n_coords))
    log_w = log_weights(points, params.correlation)
    for chunk in posterior_chunks(data, log_p, log_q, log_w):
        right = data.right[chunk.rows]
        wrong = data.answered[chunk.rows] - right
        scores = np.stack(
            [
                right * (chunk.posterior @ (dp / prob).T)
                - wrong * (chunk.posterior @ (dp / comp).T)
                for dp in derivs
            ],
            axis=2,
        )  # (p, J, coords)
        weighted = scores * data.counts[chunk.rows, None, None]
        info += np.einsum("pja,pjb->jab", weighted, scores)
    if priors is not None:
        _, precision = priors.center_and_precision(k)
        idx = np.arange(k + 1)
        info[:, idx, idx] += precision
        if params.c is not None:
            cc = params.c
            info[:, -1, -1] += (priors.c_alpha + priors.c_beta - 2) * cc * (1 - cc)
    free = np.hstack(
        [np.asarray(params.pattern, dtype=bool), np.ones((n_items, n_coords - k), bool)]
    )
    se = root_variance(np.diagonal(invert_item_blocks(info, free), axis1=1, axis2=2))
    se_c = None
    if params.c is not None:
        se_c = params.c * (1 - params.c) * se[:, -1]
    return MirtStandardErrors(slopes=se[:, :k], d=se[:, k], c=se_c)
