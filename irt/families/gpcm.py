"""The generalized partial credit model (Muraki 1992) in mirt's form, ``gpcm``:
P(X = k) ∝ exp(k·η + d_k), d_0 = 0; the scoring values ak_k = k are fixed. The slope
score is S_k = k − E[X], and ∂ log P_k/∂d_l = 1[k = l] − P_l."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.estimation.arrays import concat, like, log_sum_exp, namespace, zeros
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily, ItemValues
from irt.types import FloatArray

__all__ = ["GPCM"]


class GPCM(ItemFamily):
    """mirt's ``gpcm``: the nominal model with its scoring values fixed at 0, 1, …, m."""

    name: ClassVar[str] = "gpcm"
    title: ClassVar[str] = "Generalized partial credit"
    has_scores: ClassVar[bool] = True

    def scoring_values(self, free: FloatArray, m: int) -> FloatArray:
        return like(np.tile(np.arange(1.0, m + 1), (free.shape[0], 1)), free)  # type: ignore[no-any-return]

    def start_values(self, counts: FloatArray, stretch: FloatArray, guess: float) -> ItemValues:
        # Adjacent-category logits log(n_k / n_0), the gpcm's d_k at η = 0.
        m = counts.shape[1] - 1
        d = np.log(counts[:, 1:] / counts[:, :1]) * stretch[:, None]
        ak = self.scoring_values(np.zeros((len(d), 0)), m)
        return ItemValues(d, np.zeros(len(d)), ak)

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        eta, d = at.eta, at.d
        xp = namespace(eta)
        m = d.shape[1]
        k = like(np.arange(m + 1, dtype=np.float64), eta)
        full_d = concat([zeros((eta.shape[1], 1), eta), d], axis=1)  # d_0 = 0
        z = k * eta[:, :, None] + full_d[None, :, :]
        log_p = z - log_sum_exp(z, axis=-1)
        if not derivatives:
            return CategoryCurves(log_p)
        p = xp.exp(log_p)
        slope = k - xp.sum(p * k, axis=-1, keepdims=True)
        # ∂ log P_k/∂d_l = 1[k = l] − P_l, l = 1..m.
        thr = like(np.eye(m + 1), eta)[None, None, :, 1:] - p[:, :, None, 1:]
        return CategoryCurves(log_p, slope, thr)
