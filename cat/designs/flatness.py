"""Do a model's answers depend on item difficulty at all?

A model that mostly fails the answer format is right at a flat rate whatever the item:
every design then extrapolates from the wrong pattern (on the English demo pool a flat
40% model was predicted at 14%). The check: on the items asked, how much better the
design's own chances p_j explain the answers than one constant rate does, in
log-likelihood per item. The references, replayed in the cross-fit, show how large that
gain is for models that do follow the items' difficulty; a model below all of them is
flagged. (Measured on ARC, the English demo pool and MMLU-Pro: flat models gained at
most 0.035 nats per item at 250 items, the real and simulated models at least 0.028 on
the demo pool and 0.074 on the real sets.)
"""

from __future__ import annotations

import numpy as np

from cat.engine.audit import AUDIT_AFTER
from irt.types import BoolArray, FloatArray

_CLIP = 1e-4


def difficulty_gain(given: BoolArray, right: FloatArray, prob: FloatArray) -> FloatArray:
    """(E,) per examinee: the mean log-likelihood of its answers ``right`` (E, J) on the
    ``given`` items (E, J) under ``prob`` (E, J), less that under its own rate right on
    them; nan with no item given."""
    given = np.asarray(given, dtype=bool)
    x = np.where(given, np.asarray(right, dtype=np.float64) > 0.5, 0.0)
    p = np.clip(np.asarray(prob, dtype=np.float64), _CLIP, 1 - _CLIP)
    n = given.sum(axis=1)
    ll = np.where(given, x * np.log(p) + (1 - x) * np.log(1 - p), 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(x.sum(axis=1) / n, _CLIP, 1 - _CLIP)
        flat = n * (r * np.log(r) + (1 - r) * np.log(1 - r))
        return np.asarray(np.where(n > 0, (ll - flat) / n, np.nan))


#: z below which ``slope_z`` flags a model: one-sided 1% under the design's own model.
SLOPE_FLAG = -2.326


def slope_flagged(z: float, threshold: float, length: int) -> bool:
    """Whether a slope check z after ``length`` items flags the model: below
    ``threshold``, and only once the audit items have begun (more than ``AUDIT_AFTER``
    items): on the items an adaptive test picks alone the check has little power, and
    the fallback little to go on (on the example responses at 30 items it flagged 2 of
    12 models, and the MAE rose from .041 to .059)."""
    return bool(np.isfinite(z) and z < threshold and length > AUDIT_AFTER)


#: The fewest references' z a threshold is taken from (``slope_threshold_of``).
MIN_SLOPE_REFERENCES = 10
_Z95 = 1.6449


def slope_threshold_of(references: FloatArray | None) -> float | None:
    """The z below which the slope check flags a model, from the references' own
    cross-fitted z: the 5% point of the normal fitted to them (their mean less 1.645
    standard deviations), so that about 1 in 20 models like them is flagged, but never
    above the design's own one-sided 1% point ``SLOPE_FLAG``; None with
    fewer than ``MIN_SLOPE_REFERENCES`` finite ones (the caller then keeps
    ``SLOPE_FLAG``). The references are the better judge: a design whose chances are
    not calibrated (the mixture's are far too sure) puts their z well above N(0, 1), and
    real models that misfit the IRT model spread wider than it says. The fitted normal
    rather than the sample's own 5% point: with the few dozen references a pool has,
    that is its smallest z, one model's chance (on MMLU-Pro at 250 items −3.93 against
    −2.60 fitted, which let flat models at −3.4 pass). Never above ``SLOPE_FLAG``: the
    mixture's z run far above N(0, 1) and shift with the number of references (on ARC
    with 30, the references' cross-fitted 5% point was +0.01 at 100 items while
    held-out models of the same kind sat near −0.5, and 18% of them were flagged)."""
    if references is None:
        return None
    z = np.asarray(references, dtype=np.float64)
    z = z[np.isfinite(z)]
    if z.size < MIN_SLOPE_REFERENCES:
        return None
    return min(float(z.mean() - _Z95 * z.std(ddof=1)), SLOPE_FLAG)


def slope_z(right: FloatArray, chances: FloatArray, asked: BoolArray) -> FloatArray:
    """(E,) whether the answers follow the chances they were predicted with: the score
    statistic of Cox's (1958) calibration slope, z = Σ (η − η̄)(x − p) / √Σ (η − η̄)² p(1 − p)
    over the ``asked`` items (E, L), with p each item's chance of a right answer at the
    moment it was chosen (``chances``, (E, L)), η = logit p, x the answer in ``right``.

    Under the design's model each x − p has mean 0 given what came before, whatever the
    items chosen, so z is about standard normal for a model that fits; a model whose
    answers ignore difficulty does worse than predicted on the easy items and better on
    the hard ones, which drives z far below 0 (the audit items, ``cat.engine.audit``,
    spread η so that this shows within 60 items). NaN with fewer than 2 distinct chances."""
    asked = np.asarray(asked, dtype=bool)
    p = np.clip(np.where(asked, np.asarray(chances, dtype=np.float64), 0.5), _CLIP, 1 - _CLIP)
    x = np.where(asked, np.asarray(right, dtype=np.float64) > 0.5, 0.0)
    eta = np.log(p / (1 - p))
    n = asked.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.where(asked, eta, 0.0).sum(axis=1) / n
        w = np.where(asked, eta - centre[:, None], 0.0)
        spread = np.sqrt((w * w * p * (1 - p)).sum(axis=1))
        z = (w * (x - p)).sum(axis=1) / spread
    return np.asarray(np.where((n > 1) & (spread > 1e-9), z, np.nan))
