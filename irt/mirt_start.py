"""Starting values for the multidimensional EM (``irt.mirt_em``)."""

from __future__ import annotations

import numpy as np

from irt.mirt_model import MirtParams, Structure
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray

# Normal-ogive loadings become logistic slopes through this factor.
_LOGISTIC = 1.702


def start_values(
    responses: ResponseMatrix,
    pattern: BoolArray,
    factors: tuple[str, ...],
    structure: Structure,
    guessing: bool,
) -> MirtParams:
    """Slopes of 1 on the pattern (principal-axis slopes for an exploratory model),
    intercepts from the items' p-values, c = 0.1 in the 3PL, R = I."""
    observed = responses.observed
    right = ((responses.values == 1) & observed).astype(np.float64)
    n_obs = observed.sum(axis=0)
    p = np.clip(right.sum(axis=0) / np.maximum(n_obs, 1), 0.02, 0.98)
    p = np.where(n_obs > 0, p, 0.5)
    k = pattern.shape[1]
    if structure is Structure.EXPLORATORY and k > 1:
        slopes = _principal_slopes(right, observed.astype(np.float64), p, pattern)
    else:
        slopes = np.where(pattern, 1.0, 0.0)
    c = np.full(pattern.shape[0], 0.1) if guessing else None
    # In the 3PL the curve above c carries (p − c)/(1 − c) of the item's p-value.
    above = p if c is None else np.clip((p - c) / (1 - c), 0.02, 0.98)
    # A logistic item with slopes a has a marginal logit of about d/√(1 + 0.34·|a|²).
    d = np.log(above / (1 - above)) * np.sqrt(1.0 + 0.34 * np.sum(slopes**2, axis=1))
    return MirtParams(
        item_ids=tuple(responses.item_ids),
        slopes=slopes,
        d=d,
        factors=factors,
        correlation=np.eye(k),
        pattern=pattern,
        structure=structure,
        c=c,
    )


def _principal_slopes(
    right: FloatArray, observed: FloatArray, p: FloatArray, pattern: BoolArray
) -> FloatArray:
    """Exploratory starting slopes: principal-axis loadings of the items' (phi)
    correlations, rotated so that the triangle of ``pattern`` is zero. All-zero
    starts on a factor would be a saddle point of the likelihood."""
    k = pattern.shape[1]
    centred = (right - p) * observed
    pairs = np.maximum(observed.T @ observed, 1.0)
    cov = centred.T @ centred / pairs
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-6))
    corr = cov / np.outer(sd, sd)
    np.fill_diagonal(corr, 1.0)
    values, vectors = np.linalg.eigh(corr)
    top = np.argsort(values)[::-1][:k]
    loadings = vectors[:, top] * np.sqrt(np.maximum(values[top] - 0.5, 0.05))
    # The rows of the last k items, last first, rotated to lower-triangular form (QR of
    # their transpose) zero exactly the triangle R mirt fixes.
    tail = loadings[::-1][:k]
    q, _ = np.linalg.qr(tail.T)
    loadings = np.where(pattern, loadings @ q, 0.0)
    loadings *= np.where(loadings.sum(axis=0) < 0, -1.0, 1.0)
    communality = np.minimum(np.sum(loadings**2, axis=1), 0.8)
    return np.asarray(_LOGISTIC * loadings / np.sqrt(1.0 - communality)[:, None])
