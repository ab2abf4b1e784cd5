"""The free parameters of a multidimensional model (``irt.mirt_model.MirtParams``) as
one vector and back, for SQUAREM's extrapolation (Varadhan & Roland 2008), the largest
parameter change that stops EM, and the sign convention the calibrators report in.

The vector holds the free slopes, the intercepts, logit(c) when the model has lower
asymptotes, and, when the first ``n_correlated`` factors' correlations are free, their
angles (``irt.mirt_mstep.correlation_from_angles``: any vector is a valid correlation
matrix, so an extrapolated point never leaves the parameter space). Shared by
``irt.mirt_em`` (all factors correlated or none) and ``irt.two_tier`` (the general
block only).
"""

from __future__ import annotations

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
