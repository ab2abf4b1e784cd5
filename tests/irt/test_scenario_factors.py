"""Correlated scenario factors on fixed 3PL items: the model's form, recovery of the
factors' means and covariance, and the drift."""

from __future__ import annotations

import numpy as np
import pytest

from irt.errors import IRTError
from irt.exploratory.scenario_factors import fit_scenario_factors
from irt.models import ItemParams, ModelKind
from irt.responses import ResponseMatrix

N_SUBJECTS, PER_SCENARIO, S = 300, 120, 3


def _data(seed: int = 0) -> tuple[ItemParams, ResponseMatrix, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_items = PER_SCENARIO * S
    params = ItemParams(
        item_ids=tuple(f"q{j}" for j in range(n_items)),
        a=rng.uniform(0.8, 2.0, n_items),
        b=rng.normal(0, 1, n_items),
        c=rng.uniform(0.05, 0.2, n_items),
        d=np.ones(n_items),
        model=ModelKind.THREE_PL,
    )
    codes = np.repeat(np.arange(S), PER_SCENARIO)
    mu = np.array([0.3, -0.2, 0.0])
    cov = np.array([[1.0, 0.6, 0.3], [0.6, 0.8, 0.5], [0.3, 0.5, 1.2]])
    theta = rng.multivariate_normal(mu, cov, size=N_SUBJECTS)
    at_own = theta[:, codes]
    p = params.c + (1 - params.c) / (1 + np.exp(-params.a * (at_own - params.b)))
    values = (rng.random(p.shape) < p).astype(np.int8)
    data = ResponseMatrix(tuple(f"s{i}" for i in range(N_SUBJECTS)), params.item_ids, values)
    return params, data, codes, mu, cov


def test_the_model_is_the_3pl_at_each_items_own_scenario_ability() -> None:
    params, data, codes, _, _ = _data()
    fit = fit_scenario_factors(params, data, codes, ["a", "b", "c"])
    model = fit.params
    assert model.factors == ("a", "b", "c") and model.structure.value == "confirmatory"
    assert (model.pattern.sum(axis=1) == 1).all()
    # θ_s = μ_s + σ_s·z_s: the unit-variance form must give the 3PL at θ.
    theta = np.array([[0.5, -1.0, 2.0]])
    mu = fit.theta.mean(axis=0)
    sd = np.sqrt(np.diag(np.cov(fit.theta, rowvar=False)) + 1e-3)
    z = (theta - mu) / sd
    direct = params.c + (1 - params.c) / (1 + np.exp(-params.a * (theta[0, codes] - params.b)))
    np.testing.assert_allclose(model.probability(z)[0], direct, rtol=1e-10)


def test_the_factors_means_and_covariance_are_recovered() -> None:
    params, data, codes, mu, cov = _data()
    fit = fit_scenario_factors(params, data, codes, ["a", "b", "c"])
    np.testing.assert_allclose(fit.theta.mean(axis=0), mu, atol=0.15)
    est = np.cov(fit.theta, rowvar=False)
    # ML abilities from 120 items carry their own error (about 0.25² in variance).
    np.testing.assert_allclose(est, cov, atol=0.25)
    corr = est / np.sqrt(np.outer(np.diag(est), np.diag(est)))
    true_corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert np.max(np.abs(corr - true_corr)) < 0.12
    # The 3PL's ML ability over-predicts the number right a little, never by much.
    assert abs(fit.offset) < 0.02


def test_bad_input_is_refused() -> None:
    params, data, codes, _, _ = _data()
    with pytest.raises(IRTError, match="at least 2 scenarios"):
        fit_scenario_factors(params, data, np.zeros_like(codes), ["only"])
    with pytest.raises(IRTError, match="same items"):
        fit_scenario_factors(params, data, codes[:-1], ["a", "b", "c"])
