"""The free parameters of a multidimensional model (``irt.mirt_model.MirtParams``) as
one vector and back, and SQUAREM's extrapolation on it (Varadhan & Roland 2008), the
largest parameter change that stops EM, and the sign convention the calibrators report
in.

The vector holds the free slopes, the intercepts, logit(c) when the model has lower
asymptotes, and, when the first ``n_correlated`` factors' correlations are free, their
angles (``irt.mirt_mstep.correlation_from_angles``: any vector is a valid correlation
matrix, so an extrapolated point never leaves the parameter space). Shared by
``irt.mirt_em`` (all factors correlated or none) and ``irt.two_tier`` (the general
block only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from irt.mirt_model import MirtParams
from irt.mirt_mstep import (
    GAMMA_BOUNDS,
    MAX_INTERCEPT,
    MAX_SLOPE,
    angles_from_correlation,
    correlation_from_angles,
)
from irt.types import FloatArray

# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


def free_vector(params: MirtParams, n_correlated: int = 0) -> FloatArray:
    """The free parameters in one vector; ``n_correlated`` leading factors whose
    correlations are free (0 or 1: none)."""
    parts = [params.slopes[params.pattern], params.d]
    if params.c is not None:
        parts.append(np.log(params.c / (1 - params.c)))
    if n_correlated > 1:
        g = n_correlated
        parts.append(angles_from_correlation(params.correlation[:g, :g]))
    return np.concatenate(parts)


def from_free_vector(like: MirtParams, values: FloatArray, n_correlated: int = 0) -> MirtParams:
    """``like`` with the parameters of ``free_vector``'s layout, within bounds; the
    correlations outside the first ``n_correlated`` factors stay as ``like`` has them."""
    n_free, n = int(np.count_nonzero(like.pattern)), like.n_items
    slopes = np.zeros_like(like.slopes)
    slopes[like.pattern] = np.clip(values[:n_free], -MAX_SLOPE, MAX_SLOPE)
    at = n_free + n
    d = np.clip(values[n_free:at], -MAX_INTERCEPT, MAX_INTERCEPT)
    c = None
    if like.c is not None:
        c = 1.0 / (1.0 + np.exp(-np.clip(values[at : at + n], *GAMMA_BOUNDS)))
        at += n
    corr = like.correlation
    if n_correlated > 1:
        g = n_correlated
        corr = like.correlation.copy()
        corr[:g, :g] = correlation_from_angles(values[at:], g)
    return replace(like, slopes=slopes, d=d, c=c, correlation=corr)


def max_change(a: MirtParams, b: MirtParams) -> float:
    """The largest absolute change of a slope, intercept, logit(c) or correlation."""
    parts = [np.abs(a.slopes - b.slopes).ravel(), np.abs(a.d - b.d)]
    if a.c is not None and b.c is not None:
        parts.append(np.abs(np.log(a.c / (1 - a.c)) - np.log(b.c / (1 - b.c))))
    parts.append(np.abs(a.correlation - b.correlation).ravel())
    return float(np.max(np.concatenate(parts)))


def oriented(params: MirtParams) -> MirtParams:
    """Each factor turned so that its slopes sum to a positive number (the likelihood is
    symmetric); its correlations turn with it."""
    sign = np.where(params.slopes.sum(axis=0) < 0, -1.0, 1.0)
    return replace(
        params,
        slopes=params.slopes * sign,
        correlation=params.correlation * np.outer(sign, sign),
    )


def squarem_step(
    params: MirtParams,
    em_cycle: Callable[[MirtParams], tuple[MirtParams, float]],
    n_correlated: int = 0,
) -> tuple[MirtParams, float, int]:
    """One SQUAREM step (Varadhan & Roland 2008): two EM cycles (``em_cycle`` returns the
    next parameters and the log posterior at the ones it was given), an extrapolated
    point along them, kept only if its log posterior is no lower than at the first
    cycle's result. Returns the new parameters, the largest parameter change of the last cycles
    (``max_change``) and the number of EM cycles run."""
    first, _ = em_cycle(params)
    second, logpost = em_cycle(first)
    cycles = 2
    v0, v1, v2 = (free_vector(p, n_correlated) for p in (params, first, second))
    r, v = v1 - v0, v2 - v1 - (v1 - v0)
    new = second
    if np.any(v):
        alpha = -min(float(np.linalg.norm(r) / np.linalg.norm(v)), _MAX_EXTRAPOLATION)
        jump = from_free_vector(params, v0 - 2 * alpha * r + alpha**2 * v, n_correlated)
        landed, jump_logpost = em_cycle(jump)
        cycles += 1
        if np.isfinite(jump_logpost) and jump_logpost >= logpost - 1e-9:
            new = landed
    return new, max(max_change(new, second), max_change(second, first)), cycles
