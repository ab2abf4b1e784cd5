"""The graded response model (Samejima 1969), mirt's ``graded``: the cumulative curves
P(X ≥ k) = σ(η + d_k), k = 1..m, with d_1 > d_2 > … > d_m, and
P(X = k) = P(X ≥ k) − P(X ≥ k + 1).

The differences of cumulative curves are factored as

    σ(z_k) − σ(z_{k+1}) = σ(z_k) σ(−z_{k+1}) (1 − e^{−(d_k − d_{k+1})}),

which never subtracts two numbers close to 1; the slope score is
S_k = 1 − P(X ≥ k) − P(X ≥ k + 1), and the threshold derivatives come out as ratios of
σ's that are at most 1, so no small P_k is divided by.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.estimation.arrays import concat, cumsum, empty, namespace, ones, zeros
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily
from irt.families.coordinates import INTERCEPT_BOUND, log_sigmoid
from irt.types import FloatArray

__all__ = ["Graded"]

# Bounds on log(d_k − d_{k+1}): gaps from 6e-6 (two thresholds merged, the category
# between them empty) to 150 logits.
_LOG_GAP_BOUNDS = (-12.0, 5.0)


class Graded(ItemFamily):
    """mirt's ``graded``: Samejima's graded response model."""

    name: ClassVar[str] = "graded"
    title: ClassVar[str] = "Graded response"
    ordered_thresholds: ClassVar[bool] = True

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        d = at.d
        xp = namespace(d)
        m = d.shape[1]
        z = at.eta[:, :, None] + d[None, :, :]  # (T, J, m)
        up, down = log_sigmoid(z), log_sigmoid(-z)  # log P(X ≥ k), log P(X < k)
        # log(1 − e^{−gap}) for the gaps between neighbouring thresholds (constant in η).
        log_gap = xp.log(-xp.expm1(-(d[:, :-1] - d[:, 1:])))  # (J, m − 1)
        log_p = empty((*z.shape[:2], m + 1), z)
        log_p[..., 0] = down[..., 0]
        log_p[..., m] = up[..., m - 1]
        log_p[..., 1:m] = up[..., :-1] + down[..., 1:] + log_gap
        if not derivatives:
            return CategoryCurves(log_p)
        s = xp.exp(up)
        edge = (*z.shape[:2], 1)
        pad = concat([ones(edge, s), s, zeros(edge, s)], axis=-1)
        slope = 1.0 - pad[..., :-1] - pad[..., 1:]
        inv_gap = 1.0 / -xp.expm1(-(d[:, :-1] - d[:, 1:]))
        # ∂ log P_k/∂d_k = σ(z_k)σ(−z_k)/P_k, ∂ log P_k/∂d_{k+1} = −σ(z_{k+1})σ(−z_{k+1})/P_k,
        # written as ratios of σ's that are at most 1 (times 1/(1 − e^{−gap})).
        own = empty(z.shape, z)  # at threshold k − 1 for categories k = 1..m
        own[..., m - 1] = 1.0 - s[..., m - 1]
        own[..., : m - 1] = xp.exp(down[..., :-1] - down[..., 1:]) * inv_gap
        next_ = empty(z.shape, z)  # at threshold k for categories k = 0..m − 1
        next_[..., 0] = -s[..., 0]
        next_[..., 1:] = -xp.exp(up[..., 1:] - up[..., :-1]) * inv_gap
        thr = zeros((*z.shape[:2], m + 1, m), z)
        k = np.arange(m)
        thr[:, :, k + 1, k] = own
        thr[:, :, k, k] = next_
        return CategoryCurves(log_p, slope, thr)

    def thresholds_to_internal(self, d: FloatArray) -> FloatArray:
        delta = np.array(d, dtype=np.float64)
        delta[:, 1:] = np.log(np.maximum(d[:, :-1] - d[:, 1:], 1e-6))
        return delta

    def thresholds_to_natural(self, delta: FloatArray) -> FloatArray:
        steps = cumsum(namespace(delta).exp(delta[:, 1:]), axis=1)
        return concat([delta[:, :1], delta[:, :1] - steps], axis=1)  # type: ignore[no-any-return]

    def threshold_jacobian(self, delta: FloatArray) -> FloatArray:
        # d_k = δ_1 − Σ_{l=2..k} exp(δ_l).
        n, m = delta.shape
        jac = zeros((n, m, m), delta)
        jac[:, :, 0] = 1.0
        gaps = namespace(delta).exp(delta[:, 1:])
        for k in range(1, m):
            jac[:, k, 1 : k + 1] = -gaps[:, :k]
        return jac  # type: ignore[no-any-return]

    def threshold_bounds(self, m: int) -> tuple[FloatArray, FloatArray]:
        lo, hi = np.full(m, _LOG_GAP_BOUNDS[0]), np.full(m, _LOG_GAP_BOUNDS[1])
        lo[0], hi[0] = -INTERCEPT_BOUND, INTERCEPT_BOUND
        return lo, hi
