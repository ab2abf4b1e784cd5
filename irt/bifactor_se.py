"""Standard errors of the bifactor model's item parameters from the cross-product (XPD)
of per-subject scores, as ``irt.item_se`` does for the unidimensional models.

Subject i's observed-data score for item j's parameters η_j = (aG, aS, d[, γ = logit c])
is the posterior expectation of the complete-data score (Louis 1982), over the grid of
the item's block, (G, S_k) for a group's item and G for a general-only one:

    s_ij = Σ_m post_i(m) ∂ log f(y_ij | m) / ∂η_j.

Σ_i s_ij s_ijᵀ estimates item j's information block (R mirt's ``SE.type = "crossprod"``;
Cai, Yang & Hansen 2011 use the same per-subject scores); the prior's curvature is added
and each item's block is inverted on its own (covariances between items are ignored).
With z = aG·G + aS·S + d and P = c + (1 − c)σ(z):

    ∂ log P/∂z = (1 − c)σ(1 − σ)/P,   ∂ log(1 − P)/∂z = −σ,
    ∂ log P/∂γ = c(1 − c)(1 − σ)/P,   ∂ log(1 − P)/∂γ = −c.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.bifactor_estep import (
    SUPPORT_FLOOR,
    Answers,
    Posterior,
    block_coefficients,
    block_design,
)
from irt.bifactor_model import BifactorParams, BifactorPriors
from irt.bifactor_mstep import GAMMA_BOUNDS
from irt.estimation.observed_information import invert_item_blocks, root_variance
from irt.types import BoolArray, FloatArray

# Coordinates of ``BifactorStandardErrors.covariance``.
A_GENERAL, A_SPECIFIC, INTERCEPT, GAMMA = 0, 1, 2, 3


@dataclass(frozen=True)
class BifactorStandardErrors:
    """Per item, the standard errors of aG, aS (NaN for a general-only item), d and, in
    the 3PL, c (None in the 2PL); NaN where not identified. ``covariance`` (J, 4, 4)
    holds each item's block in the coordinates (aG, aS, d, γ = logit c), NaN where a
    coordinate is absent or not identified."""

    a_general: FloatArray
    a_specific: FloatArray
    d: FloatArray
    c: FloatArray | None
    covariance: FloatArray


def bifactor_standard_errors(
    data: Answers,
    params: BifactorParams,
    post: Posterior,
    x: FloatArray,
    priors: BifactorPriors | None = None,
) -> BifactorStandardErrors:
    """Standard errors at ``params`` from the subjects' ``post``-erior on the grid ``x``
    (``irt.bifactor_estep.posterior`` with float64 ``data``)."""
    n_items = params.n_items
    guessing = params.c is not None
    info = np.zeros((n_items, 4, 4))
    present = np.zeros((n_items, 4), dtype=bool)
    for k, items in enumerate(data.items):
        if not items.size:
            continue
        specific = k < data.n_blocks - 1
        coords = [A_GENERAL, A_SPECIFIC, INTERCEPT] if specific else [A_GENERAL, INTERCEPT]
        if guessing:
            coords.append(GAMMA)
        weights = post.groups[k] if specific else post.general
        keep = np.flatnonzero(weights.sum(axis=0) > SUPPORT_FLOOR * data.n_subjects)
        scores = _block_scores(
            data, k, params, weights[:, keep], block_design(x, specific)[:, keep]
        )
        idx = np.asarray(coords)
        block = np.einsum("aij,bij->jab", scores, scores)
        info[np.ix_(items, idx, idx)] = block
        present[np.ix_(items, idx)] = True
    if priors is not None:
        _add_prior_curvature(info, present, params, priors)
    pinned = np.zeros(n_items, dtype=bool)
    if params.c is not None:
        gamma = np.log(params.c / (1 - params.c))
        pinned = (gamma <= GAMMA_BOUNDS[0] + 1e-6) | (gamma >= GAMMA_BOUNDS[1] - 1e-6)
    # A pinned asymptote carries no information: its item is inverted without γ.
    use = present.copy()
    use[pinned, GAMMA] = False
    cov = invert_item_blocks(info, use)
    se = root_variance(np.diagonal(cov, axis1=1, axis2=2))
    se_c = None
    if params.c is not None:
        # The delta method through c = σ(γ): dc/dγ = c(1 − c).
        se_c = params.c * (1 - params.c) * se[:, GAMMA]
    return BifactorStandardErrors(
        a_general=se[:, A_GENERAL],
        a_specific=se[:, A_SPECIFIC],
        d=se[:, INTERCEPT],
        c=se_c,
        covariance=cov,
    )


def _block_scores(
    data: Answers, k: int, params: BifactorParams, weights: FloatArray, design: FloatArray
) -> FloatArray:
    """(P, N, J_k): each subject's score for each parameter of each item of block k, from
    its posterior ``weights`` (N, M) over the block's grid points ``design`` (rows, M)."""
    items = data.items[k]
    right, wrong = data.right[k], data.wrong[k]
    z = block_coefficients(params, items, design.shape[0] == 3) @ design  # (J_k, M)
    sigma = 1.0 / (1.0 + np.exp(-z))
    out = []
    if params.c is None:
        # ∂ log P/∂z = 1 − σ = 1 + ∂ log(1 − P)/∂z: one product per coordinate.
        for row in design:
            wrong_part = weights @ (sigma * row).T  # E[σ·∂z/∂η]
            out.append(right * ((weights @ row)[:, None] - wrong_part) - wrong * wrong_part)
        return np.stack(out)
    c = params.c[items, None]
    prob = c + (1 - c) * sigma
    dlogp_dz = (1 - c) * sigma * (1 - sigma) / prob
    for row in design:
        out.append(right * (weights @ (dlogp_dz * row).T) - wrong * (weights @ (sigma * row).T))
    dlogp_dgamma = c * (1 - c) * (1 - sigma) / prob
    out.append(right * (weights @ dlogp_dgamma.T) - wrong * c[:, 0])
    return np.stack(out)


def _add_prior_curvature(
    info: FloatArray, present: BoolArray, params: BifactorParams, priors: BifactorPriors
) -> None:
    """The negative Hessian of the log prior: normal precisions on (aG, aS, d) and, for
    γ = logit c under c ~ Beta(α, β), (α + β − 2)·c(1 − c)."""
    info[:, A_GENERAL, A_GENERAL] += priors.a_general_sd**-2.0
    loaded = present[:, A_SPECIFIC]
    info[loaded, A_SPECIFIC, A_SPECIFIC] += priors.a_specific_sd**-2.0
    info[:, INTERCEPT, INTERCEPT] += priors.d_sd**-2.0
    if params.c is not None:
        c = params.c
        info[:, GAMMA, GAMMA] += (priors.c_alpha + priors.c_beta - 2) * c * (1 - c)
