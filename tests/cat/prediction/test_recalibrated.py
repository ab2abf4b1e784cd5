"""The fallback prediction: the answers' own accuracy, recalibrated on the items' order of
difficulty."""

from __future__ import annotations

import numpy as np
import pytest

from cat.prediction.recalibrated import (
    fit_recalibration,
    recalibrated_accuracy,
    recalibrated_values,
)

J = 3000


def _pool(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each item's chance under a design, and 60 items asked spread over them."""
    rng = np.random.default_rng(seed)
    chances = 1 / (1 + np.exp(-rng.normal(-0.5, 1.5, J)))
    asked = np.zeros(J, dtype=bool)
    asked[rng.choice(J, 60, replace=False)] = True
    return chances, asked


def test_a_flat_model_is_predicted_at_its_own_rate_and_covered() -> None:
    held = 0
    for seed in range(40):
        chances, asked = _pool(seed)
        rng = np.random.default_rng(100 + seed)
        right = (rng.random(J) < 0.7).astype(float)
        fit = recalibrated_accuracy(asked, right, chances)
        truth = right.mean()
        held += fit.low <= truth <= fit.high
        assert abs(fit.slope) < 1.0  # β near 0: the answers ignore difficulty
    # 90% intervals: 40 flat models, at least 32 held (a correct method holds ~36).
    assert held >= 32


def test_a_model_that_follows_the_design_is_predicted_without_bias_and_covered() -> None:
    held, errors = 0, []
    for seed in range(40):
        chances, asked = _pool(seed)
        rng = np.random.default_rng(200 + seed)
        right = (rng.random(J) < chances).astype(float)
        fit = recalibrated_accuracy(asked, right, chances)
        truth = right.mean()
        held += fit.low <= truth <= fit.high
        errors.append(fit.value - truth)
        assert fit.low < fit.value < fit.high
    assert held >= 32
    assert abs(float(np.mean(errors))) < 0.02


def test_the_fit_recovers_known_coefficients_and_the_point_values_agree() -> None:
    rng = np.random.default_rng(5)
    eta = rng.normal(0, 1.5, 20000)
    right = (rng.random(eta.size) < 1 / (1 + np.exp(-(0.4 + 0.5 * eta)))).astype(float)
    coef, covariance = fit_recalibration(eta, right)
    assert coef == pytest.approx([0.4, 0.5], abs=0.05)
    assert np.all(np.sqrt(np.diag(covariance)) < 0.03)
    chances, asked = _pool(2)
    answers = (rng.random(J) < 0.4).astype(float)
    counted = np.ones(J, dtype=bool)
    counted[:100] = False  # items the model cannot answer leave the accuracy
    values = recalibrated_values(
        asked[None, :], answers[None, :], chances[None, :], counted[None, :]
    )
    fit = recalibrated_accuracy(asked, answers, chances, counted)
    assert values.value[0] == pytest.approx(fit.value)
    assert (values.low[0], values.high[0]) == (pytest.approx(fit.low), pytest.approx(fit.high))
    none = recalibrated_values(
        np.zeros((1, J), bool), answers[None, :], chances[None, :], counted[None, :]
    )
    assert np.isnan(none.value[0]) and np.isnan(none.low[0])


def test_every_answer_right_stays_finite() -> None:
    chances, asked = _pool(3)
    fit = recalibrated_accuracy(asked, np.ones(J), chances)
    assert np.isfinite([fit.value, fit.low, fit.high, fit.slope]).all()
    assert 0 <= fit.low <= fit.value <= fit.high <= 1
