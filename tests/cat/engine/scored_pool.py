"""A small pool of mixed scored items (graded, gpcm, sequential, 2PL, 3PL) for tests."""

from __future__ import annotations

import numpy as np

from irt.polytomous import ItemType, PolytomousParams


def mixed_pool(n_items: int = 120, seed: int = 0) -> PolytomousParams:
    """Items cycling through the five types, with 2 to 5 score categories."""
    rng = np.random.default_rng(seed)
    kinds = [
        ItemType.GRADED,
        ItemType.GPCM,
        ItemType.SEQUENTIAL,
        ItemType.TWO_PL,
        ItemType.THREE_PL,
    ]
    types, slopes, thresholds, asymptotes = [], [], [], []
    for j in range(n_items):
        kind = kinds[j % len(kinds)]
        a = float(rng.lognormal(0.1, 0.3))
        m = 1 if kind.binary else int(rng.integers(2, 5))
        b = np.sort(rng.normal(0.0, 1.0, m))
        if kind is ItemType.GRADED:
            d = list(-a * b)  # decreasing, as the graded model needs
        elif kind is ItemType.GPCM:
            d = list(np.cumsum(-a * b))  # d_k = −a Σ_{l ≤ k} b_l (step difficulties b)
        else:
            d = list(-a * b)
        types.append(kind)
        slopes.append(a)
        thresholds.append(d)
        asymptotes.append(0.2 if kind is ItemType.THREE_PL else 0.0)
    return PolytomousParams.create(types, slopes, thresholds, asymptotes)
