"""The continuation-ratio model (Tutz 1990), mirt's ``sequential``: Ψ_k = σ(η + d_k) is
the chance of passing step k once step k − 1 is passed, so
P(X = k) = Ψ_1 ⋯ Ψ_k (1 − Ψ_{k+1}) with Ψ_{m+1} = 0."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.estimation.arrays import concat, copy, cumsum, like, namespace, zeros
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily, ItemValues
from irt.families.coordinates import log_sigmoid
from irt.types import FloatArray

__all__ = ["Sequential"]


class Sequential(ItemFamily):
    """mirt's ``sequential``: Tutz's continuation-ratio model."""

    name: ClassVar[str] = "sequential"
    title: ClassVar[str] = "Sequential"

    def start_values(self, counts: FloatArray, stretch: FloatArray, guess: float) -> ItemValues:
        # Continuation-ratio logits logit P(X ≥ k | X ≥ k − 1).
        at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]
        ratio = at_least[:, 1:] / at_least[:, :-1]
        d = np.log(ratio / (1 - ratio)) * stretch[:, None]
        return ItemValues(d, np.zeros(len(d)))

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        m = at.d.shape[1]
        z = at.eta[:, :, None] + at.d[None, :, :]
        up, down = log_sigmoid(z), log_sigmoid(-z)
        passed = concat([zeros((*up.shape[:2], 1), up), cumsum(up, axis=-1)], axis=-1)
        log_p = copy(passed)
        log_p[..., :m] += down  # stops at step k + 1 (no step after the last category)
        if not derivatives:
            return CategoryCurves(log_p)
        s = namespace(up).exp(up)
        # ∂ log P_k/∂z_l = 1 − Ψ_l for l ≤ k, −Ψ_{k+1} for l = k + 1, 0 beyond.
        lower = like(np.tril(np.ones((m + 1, m)), -1), up)  # l < k + 1 in 0-based l
        thr = lower[None, None] * (1.0 - s)[:, :, None, :]
        k = np.arange(m)
        thr[:, :, k, k] = -s
        return CategoryCurves(log_p, namespace(thr).sum(thr, axis=-1), thr)
