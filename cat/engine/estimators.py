"""Ability estimators for the adaptive test, each vectorised over a batch of examinees.

Every estimator is a frozen dataclass with one method, ``estimate(answers, start)``,
returning (θ, SE) for each examinee. Estimates stay inside ``bounds`` and are finite.
The ML and WLE estimates do not exist (or are useless) while an examinee's answers all
agree — the failure users of catsim, mirtCAT and catSurv report most — so those
examinees get the ``fallback`` estimator's value until the pattern is mixed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from cat.engine.answers import Answers
from cat.errors import CatError
from irt.types import FloatArray, IntArray

_EPS = 1e-12


class AbilityEstimator(Protocol):
    """θ̂ and its standard error for each examinee of a batch."""

    def estimate(self, answers: Answers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``start`` is a previous estimate (warm start); shape (E,) in and out."""
        ...


def _check_bounds(bounds: tuple[float, float]) -> None:
    if not (np.isfinite(bounds[0]) and np.isfinite(bounds[1]) and bounds[0] < bounds[1]):
        raise CatError(f"estimator bounds must be finite and increasing, got {bounds}")


def _curves(ans: Answers, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """P (inside (0, 1)), P' and P'' for every given item, shape (E, L)."""
    p, dp, s = _p_and_slope(ans, theta)
    return p, dp, (ans.d - ans.c) * ans.a**2 * (s * (1 - s)) * (1 - 2 * s)


def _p_and_slope(ans: Answers, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """P (inside (0, 1)), P' and the logistic part s of every given item, (E, L)."""
    z = ans.a * (theta[:, None] - ans.b)
    s = 0.5 * (1.0 + np.tanh(0.5 * z))
    span = ans.d - ans.c
    p = np.clip(ans.c + span * s, _EPS, 1 - _EPS)
    return p, span * ans.a * (s * (1 - s)), s


def _log_lik(ans: Answers, theta: FloatArray) -> FloatArray:
    return _log_lik_at(ans, _p_and_slope(ans, theta)[0])


def _score_info(ans: Answers, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
    p, dp, _ = _p_and_slope(ans, theta)
    return _score_info_at(ans, p, dp)


def _all_terms(ans: Answers, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """log L, its score and its information at ``theta``, from one pass over the curves."""
    p, dp, _ = _p_and_slope(ans, theta)
    return (_log_lik_at(ans, p), *_score_info_at(ans, p, dp))


def _log_lik_at(ans: Answers, p: FloatArray) -> FloatArray:
    terms = ans.right * np.log(p) + (1 - ans.right) * np.log1p(-p)
    return np.asarray((terms * ans.given).sum(axis=1), dtype=np.float64)


def _score_info_at(ans: Answers, p: FloatArray, dp: FloatArray) -> tuple[FloatArray, FloatArray]:
    pq = p * (1 - p)
    score = (ans.given * (ans.right - p) * dp / pq).sum(axis=1)
    info = (ans.given * dp * dp / pq).sum(axis=1)
    return np.asarray(score, dtype=np.float64), np.asarray(info, dtype=np.float64)


def _maximise(
    ans: Answers,
    start: FloatArray,
    bounds: tuple[float, float],
    prior: tuple[float, float] | None,
    steps: int = 30,
) -> tuple[FloatArray, FloatArray]:
    """Fisher scoring with step halving on log L (+ log prior), inside ``bounds``; θ and
    the likelihood's information at it (without the prior's).

    Only the examinees whose step was rejected are evaluated again, so the halving costs
    little when most of a batch converges at once. A trial's evaluation gives its score
    and information too, which an accepted trial hands to the next step: one pass over
    the answers per step instead of two (a replay spends most of its time here).
    """
    lo, hi = bounds
    theta = np.clip(start, lo, hi).astype(np.float64)

    def evaluate(rows: IntArray, t: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        # Every examinee (the first trial, mostly): no copy of the answers.
        value, score, info = _all_terms(ans if rows.size == len(theta) else ans.rows(rows), t)
        if prior is not None:
            value = value - 0.5 * ((t - prior[0]) / prior[1]) ** 2
        return value, score, info

    value, score, info = evaluate(np.arange(len(theta)), theta)
    for _ in range(steps):
        slope, curvature = score, info
        if prior is not None:
            slope = slope - (theta - prior[0]) / prior[1] ** 2
            curvature = curvature + 1.0 / prior[1] ** 2
        step = np.clip(slope / np.maximum(curvature, 1e-8), -1.0, 1.0)
        before = theta.copy()
        pending = np.flatnonzero(np.abs(step) > 1e-10)
        scale = 1.0
        for _ in range(12):
            if pending.size == 0:
                break
            trial = np.clip(theta[pending] + scale * step[pending], lo, hi)
            trial_value, trial_score, trial_info = evaluate(pending, trial)
            # Rounding can make a step at the optimum look a hair worse: allow for it.
            ok = trial_value >= value[pending] - 1e-12 * np.abs(value[pending])
            moved = pending[ok]
            theta[moved] = trial[ok]
            value[moved] = trial_value[ok]
            score[moved] = trial_score[ok]
            info[moved] = trial_info[ok]
            pending = pending[~ok]
            scale *= 0.5
        if np.abs(theta - before).max(initial=0.0) < 1e-7:
            break
    return theta, info


@dataclass(frozen=True)
class MAPEstimator:
    """Posterior mode under a N(prior_mean, prior_sd²) prior; SE from the posterior
    information (test information + prior precision)."""

    prior_mean: float = 0.0
    prior_sd: float = 1.0
    bounds: tuple[float, float] = (-6.0, 6.0)

    def __post_init__(self) -> None:
        _check_bounds(self.bounds)
        if not self.prior_sd > 0:
            raise CatError(f"prior_sd must be positive, got {self.prior_sd}")

    def estimate(self, answers: Answers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        prior = (self.prior_mean, self.prior_sd)
        theta, info = _maximise(answers, start, self.bounds, prior)
        return theta, 1.0 / np.sqrt(info + 1.0 / self.prior_sd**2)


@dataclass(frozen=True)
class EAPEstimator:
    """Posterior mean and SD under a normal prior, by quadrature on ``n_nodes`` points
    spanning ±6 posterior SDs around each examinee's mode (a fixed grid is too coarse
    once a test is long)."""

    prior_mean: float = 0.0
    prior_sd: float = 1.0
    bounds: tuple[float, float] = (-6.0, 6.0)
    n_nodes: int = 41

    def __post_init__(self) -> None:
        _check_bounds(self.bounds)
        if not self.prior_sd > 0:
            raise CatError(f"prior_sd must be positive, got {self.prior_sd}")
        if self.n_nodes < 5:
            raise CatError(f"n_nodes must be at least 5, got {self.n_nodes}")

    def estimate(self, answers: Answers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        mode, sd = MAPEstimator(self.prior_mean, self.prior_sd, self.bounds).estimate(
            answers, start
        )
        nodes = np.clip(
            mode[:, None] + sd[:, None] * np.linspace(-6, 6, self.n_nodes), *self.bounds
        )
        log_w = (
            np.stack([_log_lik(answers, nodes[:, k]) for k in range(self.n_nodes)], axis=1)
            - 0.5 * ((nodes - self.prior_mean) / self.prior_sd) ** 2
        )
        log_w += np.log(np.maximum(np.gradient(nodes, axis=1), 1e-300))
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        mean = (w * nodes).sum(axis=1)
        var = (w * (nodes - mean[:, None]) ** 2).sum(axis=1)
        return mean, np.sqrt(np.maximum(var, 1e-24))


@dataclass(frozen=True)
class _FallbackEstimator(ABC):
    """An estimate that exists only once an examinee's answers are mixed: ``fallback``
    (MAP by default) serves until then. Subclasses find θ and the test information at
    it (``_theta_and_information``); the SE is 1/sqrt(information)."""

    bounds: tuple[float, float] = (-6.0, 6.0)
    fallback: AbilityEstimator = field(default_factory=MAPEstimator)

    def __post_init__(self) -> None:
        _check_bounds(self.bounds)

    def estimate(self, answers: Answers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        return _with_fallback(answers, start, self.fallback, self._mixed)

    def _mixed(self, answers: Answers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        theta, info = self._theta_and_information(answers, start)
        return theta, 1.0 / np.sqrt(np.maximum(info, 1e-12))

    @abstractmethod
    def _theta_and_information(
        self, answers: Answers, start: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """θ of examinees whose answers are mixed, and the test information at it."""


@dataclass(frozen=True)
class MLEstimator(_FallbackEstimator):
    """Maximum likelihood (Fisher scoring, bounded); SE = 1/sqrt(test information).

    While an examinee's answers all agree the likelihood has no maximum inside the
    bounds, so ``fallback`` (MAP by default) is used until the pattern is mixed.
    """

    def _theta_and_information(
        self, answers: Answers, start: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        # The search's last evaluation holds the information: no pass to compute it again.
        return _maximise(answers, start, self.bounds, None)


@dataclass(frozen=True)
class WLEEstimator(_FallbackEstimator):
    """Warm's weighted likelihood estimate: the root of S(θ) + J(θ) / (2 I(θ)), whose
    first-order bias is zero; SE = 1/sqrt(I). Falls back while answers all agree."""

    def _theta_and_information(
        self, answers: Answers, start: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        lo, hi = self.bounds
        theta = np.clip(start, lo, hi).astype(np.float64)
        for _ in range(40):
            p, dp, d2p = _curves(answers, theta)
            pq = p * (1 - p)
            score = (answers.given * (answers.right - p) * dp / pq).sum(axis=1)
            info = np.maximum((answers.given * dp * dp / pq).sum(axis=1), 1e-10)
            j = (answers.given * dp * d2p / pq).sum(axis=1)
            step = np.clip((score + j / (2 * info)) / info, -0.5, 0.5)
            theta = np.clip(theta + step, lo, hi)
            if np.abs(step).max(initial=0.0) < 1e-8:
                break
        return theta, _score_info(answers, theta)[1]


def _with_fallback(
    answers: Answers,
    start: FloatArray,
    fallback: AbilityEstimator,
    mixed_estimate: Callable[[Answers, FloatArray], tuple[FloatArray, FloatArray]],
) -> tuple[FloatArray, FloatArray]:
    """``mixed_estimate`` where answers are mixed, ``fallback`` where they all agree."""
    agree = answers.all_agree()
    theta = np.empty(len(start))
    se = np.empty(len(start))
    if agree.any():
        theta[agree], se[agree] = fallback.estimate(answers.rows(agree), start[agree])
    if not agree.all():
        theta[~agree], se[~agree] = mixed_estimate(answers.rows(~agree), start[~agree])
    return theta, se
