"""The bifactor model's M-step: Fisher-scoring steps on each item's expected
complete-data log-likelihood (plus its log prior) over the (G, S) grid, vectorised over
the items of a group. In the 3PL the lower asymptote is fitted as γ = logit(c)."""

from __future__ import annotations

import numpy as np

from irt.bifactor_estep import Answers, Counts
from irt.bifactor_model import BifactorParams, BifactorPriors
from irt.types import FloatArray

# Slopes stay within ±MAX_SLOPE, intercepts within ±MAX_INTERCEPT and c within
# [sigmoid(GAMMA_BOUNDS[0]), sigmoid(GAMMA_BOUNDS[1])] (1e-4 .. 0.9): an item that
# everyone answers alike would otherwise run off to infinity.
MAX_SLOPE = 20.0
MAX_INTERCEPT = 30.0
GAMMA_BOUNDS = (-9.2, 2.2)


def m_step(
    params: BifactorParams,
    counts: Counts,
    data: Answers,
    x: FloatArray,
    steps: int,
    priors: BifactorPriors | None = None,
) -> BifactorParams:
    """``steps`` Fisher-scoring steps per item from ``params``."""
    a_g, a_s, d = params.a_general.copy(), params.a_specific.copy(), params.d.copy()
    guessing = params.c is not None
    gamma = None if params.c is None else np.log(params.c / (1 - params.c))
    q = x.size
    g_grid = np.repeat(x, q)  # the (G, S) grid, flattened as the counts are
    s_grid = np.tile(x, q)
    for k, items in enumerate(data.items):
        if not items.size:
            continue
        specific = k < len(data.items) - 1
        n = counts.n[k].reshape(items.size, -1)
        r = counts.r[k].reshape(items.size, -1)
        cols = np.stack([g_grid, s_grid, np.ones(q * q)] if specific else [x, np.ones(q)])
        theta = np.stack([a_g[items], a_s[items], d[items]] if specific else [a_g[items], d[items]])
        g = None if gamma is None else gamma[items].copy()
        center, precision = (
            priors.center_and_precision(specific)
            if priors is not None
            else (np.zeros(cols.shape[0]), np.zeros(cols.shape[0]))
        )
        for _ in range(steps):
            theta, g = _scoring_step(theta, g, cols, n, r, center, precision, priors)
        theta[:-1] = np.clip(theta[:-1], -MAX_SLOPE, MAX_SLOPE)
        theta[-1] = np.clip(theta[-1], -MAX_INTERCEPT, MAX_INTERCEPT)
        a_g[items] = theta[0]
        if specific:
            a_s[items] = theta[1]
        d[items] = theta[-1]
        if gamma is not None and g is not None:
            gamma[items] = np.clip(g, *GAMMA_BOUNDS)
    c = 1.0 / (1.0 + np.exp(-gamma)) if guessing and gamma is not None else None
    return BifactorParams(params.item_ids, a_g, a_s, d, params.group, params.groups, c)


def _scoring_step(
    theta: FloatArray,
    gamma: FloatArray | None,
    cols: FloatArray,
    n: FloatArray,
    r: FloatArray,
    center: FloatArray,
    precision: FloatArray,
    priors: BifactorPriors | None,
) -> tuple[FloatArray, FloatArray | None]:
    """One step for the items of a group: ``theta`` (P, J) slope–intercept
    coordinates, ``gamma`` (J,) logit(c) or None, ``cols`` (P, M) the design over the M
    grid points, ``n``/``r`` (J, M) expected answers and right answers there."""
    sigma = 1.0 / (1.0 + np.exp(-(theta.T @ cols)))  # (J, M)
    # The lower asymptotes as a column, zero in the 2PL.
    c = np.zeros((theta.shape[1], 1)) if gamma is None else 1.0 / (1.0 + np.exp(-gamma[:, None]))
    prob = np.clip(c + (1 - c) * sigma, 1e-12, 1 - 1e-12)
    slope = (1 - c) * sigma * (1 - sigma)  # dP/dz
    rows = [slope[:, None, :] * cols[None, :, :]]  # dP/dθ, (J, P, M)
    if gamma is not None:
        rows.append(((1 - sigma) * c * (1 - c))[:, None, :])  # dP/dγ
    h = np.concatenate(rows, axis=1)
    weight = n / (prob * (1 - prob))
    grad = np.einsum("jm,jam->ja", (r - n * prob) / (prob * (1 - prob)), h)
    info = np.einsum("jm,jam,jbm->jab", weight, h, h)
    n_theta = theta.shape[0]
    grad[:, :n_theta] -= (theta.T - center) * precision
    info[:, np.arange(n_theta), np.arange(n_theta)] += precision
    if gamma is not None and priors is not None:
        c1 = c[:, 0]
        grad[:, -1] += (priors.c_alpha - 1) * (1 - c1) - (priors.c_beta - 1) * c1
        info[:, -1, -1] += (priors.c_alpha + priors.c_beta - 2) * c1 * (1 - c1)
    info += 1e-8 * np.eye(info.shape[1])[None]
    step = np.linalg.solve(info, grad[..., None])[..., 0]
    # Cap long steps: a step far from the optimum can overshoot.
    size = np.max(np.abs(step), axis=1, keepdims=True)
    step = step * np.minimum(1.0, 2.0 / np.maximum(size, 1e-12))
    new_theta = theta + step[:, :n_theta].T
    new_gamma = None if gamma is None else np.clip(gamma + step[:, -1], *GAMMA_BOUNDS)
    return new_theta, new_gamma
