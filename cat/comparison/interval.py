"""The 95% interval of the predicted accuracy difference Δ = acc(A) − acc(B), and each
model's own interval, from two sources of error.

*Measurement* (``posterior_half_width``): θ̂'s standard error carried to the accuracy by
the delta method, d acc/dθ = (1/N) Σ over unasked items of P'_j(θ̂), plus the Bernoulli
chance of the answers not yet seen (for the reference mixture, its own spread,
``cat.comparison.predictors``); A and B answer independently given their θ, so the
variances add.

*Misfit* (``pair_half_width``): real models do not answer as one θ says; on MMLU-Pro the
plug-in's error at 250 items is several points, most of it a model's own profile, not θ
noise (DESIGN.md), so measurement alone is far too narrow. A pool calibrated with
``cat calibrate --pool --cross-fit`` stores each reference's signed error e_i
(predicted − true accuracy, the reference left out of the calibration) per test length.
For a pair of references (i, k) the error of their predicted difference is e_i − e_k, so
the split-conformal 95% half-width of a new pair's difference is the
⌈(M + 1)·0.95⌉-th smallest of the M values |e_i − e_k|, i ≠ k (Lei, G'Sell, Rinaldo,
Tibshirani & Wasserman 2018, "Distribution-free predictive inference for regression",
JASA 113; pairs share references, so this is exchangeable only approximately: the
benchmark measures the coverage it reaches). What the pair's models have in common (the
calibration's drift, a topic both know) cancels in e_i − e_k as it does in the new
pair's error.

Same items: in ``cat compare`` A and B answer the same items, a reference's error comes
from its own test. The items asked are a few hundred of thousands; the predicted part,
which carries the misfit, runs over nearly the same unasked items in both cases, so the
pairing changes the misfit term little, and the stored errors are used as they are.

Lengths: the errors at the longest stored length at or below the test's length (errors
shrink as tests grow, so this errs wide); below the shortest stored length L0 they are
scaled by √(L0 / n), exact for measurement error and wide for misfit, which does not
shrink with n. The interval is the wider of the two half-widths, as ``cat assess``
widens its own (``cat.prediction.intervals.widen``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from cat.prediction.conformal import conformal_quantile
from cat.prediction.disagreement import MIN_OFFSET, MIN_REFERENCES
from irt.types import FloatArray
from itempool.prediction_errors import PredictionErrors

#: The difference's interval (and each model's, in ``cat compare``): two-sided 95%.
LEVEL = 0.95
#: The power at which the smallest detectable difference is given.
POWER = 0.80


def z_of(level: float) -> float:
    """The z of a two-sided normal interval at ``level``."""
    return float(ndtri(0.5 + level / 2))


def detectable_difference(half_width: float, level: float = LEVEL, power: float = POWER) -> float:
    """The smallest true difference a test of this half-width finds with ``power``
    (two-sided at ``level``): (z_(1−α/2) + z_power)·SE, the SE being half-width / z."""
    z = z_of(level)
    return float(half_width / z * (z + float(ndtri(power))))


def conformal_half_width(abs_errors: FloatArray, level: float = LEVEL) -> float:
    """The split-conformal half-width at ``level`` from n absolute errors: the
    ⌈(n + 1)·level⌉-th smallest (the largest when that rank exceeds n)."""
    ranked = np.sort(np.asarray(abs_errors, dtype=np.float64))
    rank = math.ceil((len(ranked) + 1) * level)
    return float(ranked[min(rank, len(ranked)) - 1])


def stored_length(errors: PredictionErrors, length: int) -> tuple[int, float]:
    """(the stored length whose errors stand for a test of ``length`` items, the factor
    they are scaled by): the longest at or below it, else the shortest, scaled by
    √(shortest / length)."""
    lengths = sorted(int(k) for k in errors.errors)
    below = [k for k in lengths if k <= length]
    if below:
        return below[-1], 1.0
    return lengths[0], math.sqrt(lengths[0] / max(length, 1))


@dataclass(frozen=True)
class StoredWidth:
    """A conformal half-width from the pool's errors, and where it came from."""

    half_width: float
    lengths: tuple[int, int]  # the stored lengths used for A and B (equal for one model)
    scale: float  # > 1 where a test was shorter than every stored length
    references: int
    pairs: int  # errors (or error differences) the quantile was taken over
    # Scaled by the two models' disagreements (``scaled_pair_half_width``).
    scaled: bool = False
    # Whether A's and B's disagreements exceed the references' 90% conformal quantile
    # (unlike the references, as ``cat assess`` flags a model), where scaled.
    unlike: tuple[bool, bool] = (False, False)


def pair_half_width(
    errors: PredictionErrors, length_a: int, length_b: int, level: float = LEVEL
) -> StoredWidth:
    """The conformal half-width of a predicted difference between a model tested on
    ``length_a`` items and one tested on ``length_b``: the ``level`` quantile of
    |e_i − e_k| over ordered pairs of distinct references."""
    stored_a, scale_a = stored_length(errors, length_a)
    stored_b, scale_b = stored_length(errors, length_b)
    e_a = np.asarray(errors.errors[str(stored_a)], dtype=np.float64)
    e_b = np.asarray(errors.errors[str(stored_b)], dtype=np.float64)
    diff = np.abs(e_a[:, None] - e_b[None, :])
    if len(e_a) == len(e_b):  # one list per length, in one order of references
        diff = diff[~np.eye(len(e_a), dtype=bool)]
    scale = max(scale_a, scale_b)
    half = conformal_half_width(diff.ravel(), level) * scale
    return StoredWidth(half, (stored_a, stored_b), scale, len(e_a), int(diff.size))


def scaled_pair_half_width(
    errors: PredictionErrors,
    length_a: int,
    length_b: int,
    disagreements: tuple[float, float],
    level: float = LEVEL,
) -> StoredWidth | None:
    """``pair_half_width`` scaled by how unlike the references the two models are: each
    reference pair's |e_i − e_k| is divided by √((s_i + c)² + (s_k + c)²), s its models'
    disagreements (``cat.prediction.disagreement``: the prediction against its companion
    of the same answers), c the references' median disagreement; the ``level``
    conformal quantile q of those ratios gives the new pair's half-width q·√((s_A + c)²
    + (s_B + c)²) (normalised split-conformal, as ``cat assess`` scales one model's).
    A pair of models like the references gets about their typical width, a pair with a
    model whose two predictions part a wider one (``cat.comparison.plugin.difference``
    takes it only where it is the wider). None where the pool stores no disagreements
    at those lengths, or too few."""
    stored_a, scale_a = stored_length(errors, length_a)
    stored_b, scale_b = stored_length(errors, length_b)
    spread = errors.disagreement or {}
    if str(stored_a) not in spread or str(stored_b) not in spread:
        return None
    e_a, e_b = (np.asarray(errors.errors[str(k)], dtype=np.float64) for k in (stored_a, stored_b))
    s_a, s_b = (np.asarray(spread[str(k)], dtype=np.float64) for k in (stored_a, stored_b))
    if e_a.shape != s_a.shape or e_b.shape != s_b.shape:
        return None
    keep_a = np.isfinite(e_a) & np.isfinite(s_a)
    keep_b = np.isfinite(e_b) & np.isfinite(s_b)
    if min(keep_a.sum(), keep_b.sum()) < MIN_REFERENCES:
        return None
    offset = max(float(np.median(np.concatenate([s_a[keep_a], s_b[keep_b]]))), MIN_OFFSET)
    scores = np.abs(e_a[:, None] - e_b[None, :]) / np.hypot(
        s_a[:, None] + offset, s_b[None, :] + offset
    )
    kept = keep_a[:, None] & keep_b[None, :]
    if len(e_a) == len(e_b):  # one list per length, in one order of references
        kept &= ~np.eye(len(e_a), dtype=bool)
    scale = max(scale_a, scale_b)
    quantile = conformal_half_width(scores[kept], level)
    half = quantile * math.hypot(disagreements[0] + offset, disagreements[1] + offset) * scale
    unlike = (
        bool(disagreements[0] > conformal_quantile(s_a[keep_a])),
        bool(disagreements[1] > conformal_quantile(s_b[keep_b])),
    )
    return StoredWidth(
        half,
        (stored_a, stored_b),
        scale,
        int(keep_a.sum()),
        int(kept.sum()),
        scaled=True,
        unlike=unlike,
    )


def single_half_width(errors: PredictionErrors, length: int, level: float = LEVEL) -> StoredWidth:
    """The conformal half-width of one model's predicted accuracy after ``length`` items
    (as ``cat assess`` widens by, at ``level``)."""
    stored, scale = stored_length(errors, length)
    values = np.abs(np.asarray(errors.errors[str(stored)], dtype=np.float64))
    half = conformal_half_width(values, level) * scale
    return StoredWidth(half, (stored, stored), scale, len(values), len(values))


def posterior_half_width(variances: tuple[float, float], level: float = LEVEL) -> float:
    """The measurement half-width of Δ: z·√(Var_A + Var_B), each model's variance of its
    predicted accuracy (θ's by the delta method, (g·SE)², plus the unseen answers'
    chance; or a reference design's own). A and B answer independently given their
    abilities, so the variances add."""
    return z_of(level) * math.sqrt(sum(variances))


def paired_mean(
    differences: FloatArray, level: float = LEVEL, population: int | None = None
) -> tuple[float, float, float]:
    """(mean, low, high) of paired 0/1 differences (A right − B right, each −1, 0 or 1):
    the t interval at ``level``, with the finite-population correction when the items
    are drawn from ``population`` items. The variance takes the discordant share with
    one pair of each sign added, (k + 1)/(n + 2): n agreeing answers would otherwise
    give an interval of width 0."""
    from scipy.stats import t as student_t

    d = np.asarray(differences, dtype=np.float64)
    n = d.size
    if n == 0:
        return float("nan"), -1.0, 1.0
    mean = float(d.mean())
    if n == 1:
        return mean, -1.0, 1.0
    discordant = (np.count_nonzero(d) + 1) / (n + 2)
    sd = math.sqrt(max(discordant - mean**2, 0.0) * n / (n - 1))
    fpc = 1.0
    if population is not None and population > 1:
        fpc = math.sqrt(max(population - n, 0) / (population - 1))
    half = float(student_t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n) * fpc
    return mean, max(-1.0, mean - half), min(1.0, mean + half)
