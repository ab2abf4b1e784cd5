"""Item fit given θ: refits, p-value corrections, the null rate and planted misfits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from irt.errors import IRTError
from irt.fit.items import adjust_p_values, item_fit, refit_items
from irt.models import ItemParams, probability
from irt.priors import ItemPriors
from irt.simulate import random_params

PRIORS = ItemPriors.default_for("3pl")


def _answers(params: ItemParams, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    p = probability(theta, params)
    return (rng.random(p.shape) < p).astype(np.float64)


def test_holm_and_benjamini_hochberg_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # sorted 0.005, 0.01, 0.03, 0.04 of m = 4 tests; the NaN is not a test
    np.testing.assert_allclose(adjust_p_values(p, "bh")[:4], [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(adjust_p_values(p, "holm")[:4], [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(adjust_p_values(p, "bh")[4])
    q = np.random.default_rng(0).random(200) ** 3
    np.testing.assert_allclose(adjust_p_values(q, "bh"), false_discovery_control(q))
    with pytest.raises(IRTError, match="unknown correction"):
        adjust_p_values(p, "bonferroni")


def test_refit_at_known_theta_recovers_the_curves() -> None:
    rng = np.random.default_rng(1)
    true = random_params(20, rng)
    theta = rng.normal(size=5000)
    x = _answers(true, theta, rng)
    start = ItemParams.create(np.ones(20), np.zeros(20), np.full(20, 0.15))
    fitted = refit_items(x, np.ones_like(x), theta, start, PRIORS)
    # 3PL b trades off against c; with 5,000 answers each, it still lands close.
    assert np.abs(fitted.b - true.b).mean() < 0.12
    assert np.abs(fitted.b - true.b).max() < 0.4
    assert np.abs(fitted.a - true.a).mean() < 0.12


def test_null_rate_is_near_alpha_on_model_data() -> None:
    """Answers drawn from the 3PL at known θ: about 5% of items at p < 0.05 and no item
    left after the Benjamini–Hochberg correction."""
    rng = np.random.default_rng(2)
    true = random_params(800, rng)
    theta = rng.normal(size=60)
    x = _answers(true, theta, rng)
    fit = item_fit(x, np.ones_like(x), theta, true, PRIORS, replicates=30, seed=2)
    share = float(np.mean(fit.p_value < 0.05))
    assert 0.025 <= share <= 0.075, share
    assert int(np.sum(adjust_p_values(fit.p_value) < 0.05)) <= 2
    assert np.isfinite(fit.p_value).all() and fit.replicates == 30 and fit.seed == 2


def test_planted_wrong_keys_are_found() -> None:
    """Items whose scored key is a distractor the strong subjects avoid: right answers
    fall with θ. With 300 subjects the test finds most of them (14 of 15 here), the
    correction keeps the rest clean."""
    rng = np.random.default_rng(3)
    true = random_params(300, rng)
    theta = rng.normal(size=300)
    x = _answers(true, theta, rng)
    bad = np.arange(0, 300, 20)  # 15 items
    p_bad = 0.15 + 0.7 / (1 + np.exp(1.5 * (theta[:, None] - true.b[bad])))
    x[:, bad] = (rng.random(p_bad.shape) < p_bad).astype(np.float64)
    fit = item_fit(x, np.ones_like(x), theta, true, PRIORS, replicates=30, seed=3)
    flagged = adjust_p_values(fit.p_value) < 0.05
    assert flagged[bad].sum() >= 12, flagged[bad].sum()
    good = np.setdiff1d(np.arange(300), bad)
    assert flagged[good].sum() <= 2


def test_items_with_few_answers_are_not_tested() -> None:
    rng = np.random.default_rng(4)
    true = random_params(50, rng)
    theta = rng.normal(size=40)
    x = _answers(true, theta, rng)
    observed = np.ones_like(x)
    observed[5:, 0] = 0  # item 0: five answers
    fit = item_fit(x, observed, theta, true, PRIORS, replicates=20, min_responses=10)
    assert np.isnan(fit.p_value[0]) and fit.n_responses[0] == 5
    assert np.isfinite(fit.p_value[1:]).all()


def test_bad_input_is_refused() -> None:
    true = random_params(5, np.random.default_rng(5))
    x = np.zeros((10, 5))
    with pytest.raises(IRTError, match="do not match"):
        item_fit(x, np.ones((10, 4)), np.zeros(10), true, PRIORS)
    with pytest.raises(IRTError, match="at least 20"):
        item_fit(x, np.ones_like(x), np.zeros(10), true, PRIORS, replicates=5)
