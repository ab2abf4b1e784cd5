"""The 3PL, mirt's ``3PL``: P(X = 1) = c + (1 − c) σ(η + d), a binary item with a lower
asymptote c.

log P(X = 1) is log(1 − P_0) where P_0 < 1/2 (exact there, and never above 0), and the
sum of the guessing and the logistic terms where P(X = 1) is small."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.estimation.arrays import clip, copy, namespace, stack, zeros
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily, ItemValues
from irt.families.coordinates import log_sigmoid
from irt.types import FloatArray

__all__ = ["ThreePL"]


class ThreePL(ItemFamily):
    """mirt's ``3PL``: the 2PL with a lower asymptote."""

    name: ClassVar[str] = "3PL"
    title: ClassVar[str] = "3PL"
    binary: ClassVar[bool] = True
    has_guessing: ClassVar[bool] = True

    def start_values(self, counts: FloatArray, stretch: FloatArray, guess: float) -> ItemValues:
        # The proportion correct above the guessing floor.
        p = np.clip((counts[:, 1] / counts.sum(axis=1) - guess) / (1 - guess), 0.02, 0.98)
        d = np.log(p / (1 - p))[:, None] * stretch[:, None]
        return ItemValues(d, np.full(len(d), guess))

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        xp = namespace(at.eta)
        c = zeros(at.eta.shape[1], at.eta) if at.c is None else at.c
        z = at.eta + at.d[None, :, 0]  # (T, J)
        up, down = log_sigmoid(z), log_sigmoid(-z)
        with np.errstate(divide="ignore"):
            log_c = xp.log(c)
        log_wrong = xp.log1p(-c) + down
        small_wrong = log_wrong < -np.log(2.0)
        log_right = xp.where(
            small_wrong,
            xp.log1p(-xp.exp(clip(log_wrong, -np.inf, -np.log(2.0)))),
            xp.logaddexp(log_c, xp.log1p(-c) + up),
        )
        log_p = stack([log_wrong, log_right], axis=-1)
        if not derivatives:
            return CategoryCurves(log_p)
        dz_right = xp.exp(xp.log1p(-c) + up + down - log_right)  # (1 − c)σ(1 − σ)/P
        slope = stack([-xp.exp(up), dz_right], axis=-1)
        ones = xp.broadcast_to(-1.0 / (1.0 - c), z.shape)
        asym = stack([ones, xp.exp(down - log_right)], axis=-1)
        return CategoryCurves(log_p, slope, copy(slope[..., None]), asym)
