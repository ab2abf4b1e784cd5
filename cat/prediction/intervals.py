"""The accuracy interval ``cat assess`` gives, as two small functions that ``cat
validate`` applies to held-out subjects too, so that both build it the same way.

θ-only: the predicted accuracy at the ends of θ's 90% interval, widened by the
Bernoulli chance of the answers not yet seen (``theta_and_chance``). With cross-fitted
errors of the references, that interval is widened where narrower to their
split-conformal half-width around the prediction (``widen``).
"""

from __future__ import annotations

import numpy as np

from irt.types import FloatArray

#: The z of a two-sided 90% normal interval: scipy.special.ndtri(0.95), written out so that
#: a run does not import scipy.special (0.4 s) before its first request.
Z90 = 1.6448536269514722


def theta_and_chance(
    value: FloatArray | float,
    at_low: FloatArray | float,
    at_high: FloatArray | float,
    spread: FloatArray | float,
) -> tuple[FloatArray, FloatArray]:
    """(low, high) of the θ-only interval: the predicted accuracy ``value`` and its values
    ``at_low``/``at_high`` ends of θ's interval, combined in quadrature with ``spread``,
    the 90% half-width of the unseen answers' chance (z·√Σ p(1 − p) / n items)."""
    v = np.asarray(value, dtype=np.float64)
    low = v - np.hypot(v - np.asarray(at_low, dtype=np.float64), spread)
    high = v + np.hypot(np.asarray(at_high, dtype=np.float64) - v, spread)
    return low, high


def widen(
    value: FloatArray | float,
    low: FloatArray | float,
    high: FloatArray | float,
    half_width: FloatArray | float,
) -> tuple[FloatArray, FloatArray]:
    """(low, high) widened, where narrower, to ``value`` ± ``half_width`` (a conformal
    half-width of cross-fitted errors), within [0, 1]."""
    v = np.asarray(value, dtype=np.float64)
    new_low = np.maximum(0.0, np.minimum(low, v - half_width))
    new_high = np.minimum(1.0, np.maximum(high, v + half_width))
    return new_low, new_high
