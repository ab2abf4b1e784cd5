"""The M-step's internal item coordinates: what is estimated, bounds, and conversions.

Items are optimised in slope–intercept coordinates, which are far better conditioned than
(a, b) when a is small:

    z = a θ + δ      (b = −δ / a)
    a = exp(α) when a has a log-normal prior (it must stay positive), else a = α
    c = σ(γ), d = σ(λ)  (logits keep the asymptotes strictly inside (0, 1))

Coordinates are arrays of shape (J, 4), one row per item, columns ``ALPHA``, ``DELTA``,
``GAMMA`` and ``LAMBDA``; the columns a model does not estimate are carried along unused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.estimation.arrays import copy, namespace, ones, zeros
from irt.families.coordinates import (
    INTERCEPT_BOUND,
    LOG_SLOPE_BOUNDS,
    LOGIT_BOUND,
    RAW_SLOPE_BOUND,
    sigmoid,
)
from irt.models import ModelKind
from irt.priors import ItemPriors
from irt.types import FloatArray

#: Floor for divisors and probabilities.
EPS = 1e-12

ALPHA, DELTA, GAMMA, LAMBDA = 0, 1, 2, 3


@dataclass(frozen=True)
class MStepSpec:
    """What the M-step estimates: the model, the priors and the grid."""

    model: ModelKind
    priors: ItemPriors
    theta: FloatArray  # (Q,) quadrature points

    @property
    def log_slope(self) -> bool:
        return self.priors.has_a

    @property
    def active(self) -> tuple[int, ...]:
        """Per-item coordinates, in column order of the coordinate array."""
        if self.model is ModelKind.ONE_PL:
            return (DELTA,)
        return tuple(estimated_columns(self))


def estimated_columns(spec: MStepSpec) -> list[int]:
    """The coordinates with a derivative: the slope and intercept, and the asymptotes the
    model has (the 1PL's common slope included)."""
    cols = [ALPHA, DELTA]
    if spec.model.has_guessing:
        cols.append(GAMMA)
    if spec.model.has_slipping:
        cols.append(LAMBDA)
    return cols


def to_abcd(coords: FloatArray, spec: MStepSpec) -> tuple[FloatArray, ...]:
    """(a, b, c, d) from internal coordinates, shape (J, 4) -> four (J,) arrays (numpy
    or torch, like ``coords``)."""
    xp = namespace(coords)
    a = xp.exp(coords[:, ALPHA]) if spec.log_slope else copy(coords[:, ALPHA])
    b = -coords[:, DELTA] / xp.where(a == 0, EPS, a)
    n = coords.shape[0]
    c = sigmoid(coords[:, GAMMA]) if spec.model.has_guessing else zeros(n, like=coords)
    d = sigmoid(coords[:, LAMBDA]) if spec.model.has_slipping else ones(n, like=coords)
    return a, b, c, d


def from_abcd(
    a: FloatArray, b: FloatArray, c: FloatArray, d: FloatArray, spec: MStepSpec
) -> FloatArray:
    """Internal coordinates from (a, b, c, d), clipped into their bounds."""
    coords = np.zeros((len(a), 4))
    coords[:, ALPHA] = np.log(np.maximum(a, 1e-6)) if spec.log_slope else a
    coords[:, DELTA] = -a * b
    if spec.model.has_guessing:
        cc = np.clip(c, 1e-6, 1 - 1e-6)
        coords[:, GAMMA] = np.log(cc / (1 - cc))
    if spec.model.has_slipping:
        dd = np.clip(d, 1e-6, 1 - 1e-6)
        coords[:, LAMBDA] = np.log(dd / (1 - dd))
    return clip_coords(coords, spec)


def clip_coords(coords: FloatArray, spec: MStepSpec) -> FloatArray:
    xp = namespace(coords)
    out = copy(coords)
    if spec.log_slope:
        out[:, ALPHA] = xp.clip(out[:, ALPHA], *LOG_SLOPE_BOUNDS)
    else:
        out[:, ALPHA] = xp.clip(out[:, ALPHA], -RAW_SLOPE_BOUND, RAW_SLOPE_BOUND)
    out[:, DELTA] = xp.clip(out[:, DELTA], -INTERCEPT_BOUND, INTERCEPT_BOUND)
    out[:, GAMMA] = xp.clip(out[:, GAMMA], -LOGIT_BOUND, LOGIT_BOUND)
    out[:, LAMBDA] = xp.clip(out[:, LAMBDA], -LOGIT_BOUND, LOGIT_BOUND)
    return out  # type: ignore[no-any-return]
