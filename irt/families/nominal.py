"""The nominal model (Bock 1972) in Thissen, Cai & Bock's (2010) parametrisation, mirt's
``nominal``: P(X = k) ∝ exp(ak_k·η + d_k) with ak_0 = 0, ak_m = m and d_0 = 0 fixed and
ak_1..ak_{m−1} free; the gpcm is the nominal item with ak_k = k.

With z_l = ak_l η + d_l, ∂ log P_k/∂z_l = 1[k = l] − P_l, which gives the derivatives in
η (the slope score ak_k − E[ak]), in d_l and in the free ak_l (times η)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.errors import ParamsError
from irt.estimation.arrays import concat, like, log_sum_exp, namespace, zeros
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily, ItemValues
from irt.types import FloatArray

__all__ = ["Nominal"]


class Nominal(ItemFamily):
    """mirt's ``nominal``: Bock's nominal categories model."""

    name: ClassVar[str] = "nominal"
    title: ClassVar[str] = "Nominal response"
    has_scores: ClassVar[bool] = True
    # With two categories the nominal item is the 2PL: no scoring value is free.
    min_categories: ClassVar[int] = 3

    def free_scores(self, m: int) -> int:
        return m - 1  # ak_1..ak_{m−1}; ak_m = m fixes the scale

    def scoring_values(self, free: FloatArray, m: int) -> FloatArray:
        return concat([free, like(np.full((free.shape[0], 1), float(m)), free)], axis=1)  # type: ignore[no-any-return]

    def start_values(self, counts: FloatArray, stretch: FloatArray, guess: float) -> ItemValues:
        # The gpcm's start: scoring values 1..m, adjacent-category logits.
        m = counts.shape[1] - 1
        d = np.log(counts[:, 1:] / counts[:, :1]) * stretch[:, None]
        ak = self.scoring_values(np.tile(np.arange(1.0, m), (len(d), 1)), m)
        return ItemValues(d, np.zeros(len(d)), ak)

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        if at.ak is None:
            raise ParamsError("nominal items need their scoring values ak")
        eta, d = at.eta, at.d
        xp = namespace(eta)
        n_items, m = d.shape
        full_ak = concat([zeros((n_items, 1), eta), at.ak], axis=1)  # ak_0 = 0
        full_d = concat([zeros((n_items, 1), eta), d], axis=1)  # d_0 = 0
        z = eta[:, :, None] * full_ak[None] + full_d[None]
        log_p = z - log_sum_exp(z, axis=-1)
        if not derivatives:
            return CategoryCurves(log_p)
        p = xp.exp(log_p)
        slope = full_ak[None] - xp.sum(p * full_ak[None], axis=-1, keepdims=True)
        dz = like(np.eye(m + 1), eta)[None, None] - p[:, :, None, :]  # (Q, J, K, K)
        scores = dz[..., 1:m] * eta[:, :, None, None]
        return CategoryCurves(log_p, slope, dz[..., 1:], scores=scores)
