"""The replay's ability search against the implementation it replaced, and a batch of
examinees replayed together against each replayed alone."""

from __future__ import annotations

import numpy as np

from cat.engine.answers import Answers
from cat.engine.estimators import MAPEstimator, MLEstimator, _log_lik, _maximise, _score_info
from cat.engine.selection import MaxInfo
from cat.engine.simulation import CATDesign, replay_cat
from cat.engine.stopping import StoppingRule
from irt.simulate import random_params, simulate_responses
from irt.types import FloatArray

PARAMS = random_params(120, np.random.default_rng(5), "3pl")


def _reference_maximise(
    ans: Answers,
    start: FloatArray,
    bounds: tuple[float, float],
    prior: tuple[float, float] | None,
    steps: int = 30,
) -> FloatArray:
    """The search before one evaluation served both the halving and the next step: log L
    and its score and information evaluated apart."""
    lo, hi = bounds
    theta = np.clip(start, lo, hi).astype(np.float64)

    def objective(rows: np.ndarray, t: FloatArray) -> FloatArray:
        value = _log_lik(ans.rows(rows), t)
        if prior is not None:
            value = value - 0.5 * ((t - prior[0]) / prior[1]) ** 2
        return value

    value = objective(np.arange(len(theta)), theta)
    for _ in range(steps):
        score, info = _score_info(ans, theta)
        if prior is not None:
            score = score - (theta - prior[0]) / prior[1] ** 2
            info = info + 1.0 / prior[1] ** 2
        step = np.clip(score / np.maximum(info, 1e-8), -1.0, 1.0)
        before = theta.copy()
        pending = np.flatnonzero(np.abs(step) > 1e-10)
        scale = 1.0
        for _ in range(12):
            if pending.size == 0:
                break
            trial = np.clip(theta[pending] + scale * step[pending], lo, hi)
            trial_value = objective(pending, trial)
            ok = trial_value >= value[pending] - 1e-12 * np.abs(value[pending])
            theta[pending[ok]] = trial[ok]
            value[pending[ok]] = trial_value[ok]
            pending = pending[~ok]
            scale *= 0.5
        if np.abs(theta - before).max(initial=0.0) < 1e-7:
            break
    return theta


def _answers(n_exam: int, length: int, seed: int) -> Answers:
    rng = np.random.default_rng(seed)
    items = np.stack([rng.permutation(PARAMS.n_items)[:length] for _ in range(n_exam)])
    # Ragged: examinee e has answered only its first k_e items.
    counts = rng.integers(1, length + 1, n_exam)
    items[np.arange(length)[None, :] >= counts[:, None]] = -1
    right = (rng.random(items.shape) < 0.6).astype(np.float64)
    return Answers.gather(PARAMS, items, right)


def test_the_search_gives_the_estimates_of_the_search_it_replaced() -> None:
    for seed in range(3):
        ans = _answers(60, 40, seed)
        start = np.random.default_rng(seed).normal(size=60)
        for prior in (None, (0.0, 1.0)):
            theta, info = _maximise(ans, start, (-6.0, 6.0), prior)
            expected = _reference_maximise(ans, start, (-6.0, 6.0), prior)
            np.testing.assert_allclose(theta, expected, rtol=0, atol=1e-12)
            # The information it hands back is the likelihood's at θ̂.
            np.testing.assert_allclose(info, _score_info(ans, theta)[1], rtol=1e-12)


def test_the_estimators_standard_errors_are_the_information_at_the_estimate() -> None:
    ans = _answers(40, 30, 9)
    start = np.zeros(40)
    for estimator, prior_precision in ((MLEstimator(), 0.0), (MAPEstimator(), 1.0)):
        theta, se = estimator.estimate(ans, start)
        mixed = ~ans.all_agree() if prior_precision == 0.0 else np.ones(40, dtype=bool)
        info = _score_info(ans, theta)[1] + prior_precision
        np.testing.assert_allclose(se[mixed], 1 / np.sqrt(info[mixed]), rtol=1e-12)


def test_a_batch_replays_as_each_examinee_alone() -> None:
    rng = np.random.default_rng(11)
    data = simulate_responses(PARAMS, rng.normal(size=12), rng, missing_rate=0.2)
    design = CATDesign(MaxInfo(), MLEstimator(), StoppingRule(25))
    together = replay_cat(PARAMS, data, design, np.random.default_rng(0))
    for k in range(data.n_subjects):
        alone = replay_cat(
            PARAMS, data.subset(subjects=np.array([k])), design, np.random.default_rng(0)
        )
        np.testing.assert_array_equal(alone.items[0], together.items[k])
        assert abs(alone.theta_hat[0] - together.theta_hat[k]) < 1e-6
        assert abs(alone.se[0] - together.se[k]) < 1e-6
