"""A new item family written as a user would, outside ``irt``: a 2PL whose upper
asymptote is a known 1 − s (s = 0.05, a slip rate fixed in advance, as in a "slipping"
4PL whose d is not estimated), P(X = 1) = (1 − s) σ(η + d).

It is one module and one call (``irt.families.register(SlippingTwoPL())``); the tests
of ``tests/cat/test_new_family.py`` fit, score, calibrate, assess and validate with it.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from irt.estimation.arrays import copy, namespace, stack
from irt.families import CategoryCurves, CurveInputs, ItemFamily
from irt.families.coordinates import log_sigmoid

#: The slip rate: a right answer is lost this often whatever the ability.
SLIP = 0.05


class SlippingTwoPL(ItemFamily):
    """A binary item whose right answers top out at 1 − ``SLIP``."""

    name: ClassVar[str] = "slip2PL"
    title: ClassVar[str] = "2PL with a 5% slip"
    binary: ClassVar[bool] = True

    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        xp = namespace(at.eta)
        z = at.eta + at.d[None, :, 0]
        up, down = log_sigmoid(z), log_sigmoid(-z)
        log_right = np.log1p(-SLIP) + up
        # 1 − (1 − s)σ(z) = s + (1 − s)σ(−z), summed in log space.
        log_wrong = xp.logaddexp(np.log(SLIP) + 0.0 * z, np.log1p(-SLIP) + down)
        log_p = stack([log_wrong, log_right], axis=-1)
        if not derivatives:
            return CategoryCurves(log_p)
        # ∂ log P_1/∂z = σ(−z); ∂ log P_0/∂z = −(1 − s)σ(z)σ(−z)/P_0.
        slope = stack([-xp.exp(np.log1p(-SLIP) + up + down - log_wrong), xp.exp(down)], axis=-1)
        return CategoryCurves(log_p, slope, copy(slope[..., None]))
