"""Ridge prediction across reference subjects."""

from __future__ import annotations

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.predictors import ridge_accuracy, ridge_loo


def test_ridge_recovers_a_linear_rule_and_its_loo_error_is_honest() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    beta = np.array([1.0, -2.0, 0.5, 0.0, 0.0])
    y = 3.0 + x @ beta + rng.normal(scale=0.1, size=200)
    x_new = np.array([0.5, 0.5, 0.5, 0.5, 0.5])
    pred, loo = ridge_loo(x, y, x_new)
    assert pred == pytest.approx(3.0 + x_new @ beta, abs=0.05)
    assert loo == pytest.approx(0.1, rel=0.2)
    with pytest.raises(CatError):
        ridge_loo(x[:2], y[:2], x_new)


def test_ridge_accuracy_counts_given_answers_exactly() -> None:
    rng = np.random.default_rng(1)
    ability = rng.normal(size=120)
    p = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=60)[None, :])))
    refs = (rng.random((120, 60)) < p).astype(float)
    observed = np.ones_like(refs, dtype=bool)
    given = np.arange(20)
    subject = refs[0]
    acc = ridge_accuracy(refs[1:], observed[1:], given, subject[given], np.arange(60))
    assert 0 <= acc <= 1
    assert acc == pytest.approx(subject.mean(), abs=0.12)
    # Every answered item given: the prediction is the subject's own accuracy.
    all_given = ridge_accuracy(refs[1:], observed[1:], np.arange(60), subject, np.arange(60))
    assert all_given == pytest.approx(subject.mean())


def test_reference_offset_measures_a_constant_drift() -> None:
    from cat.prediction.predictors import reference_offset
    from irt.models import probability
    from irt.simulate import random_params

    params = random_params(300, np.random.default_rng(2), "3pl")
    theta = np.linspace(-2, 2, 15)
    expected = probability(theta, params).mean(axis=1)
    # references that score 0.03 below what the model expects at their θ
    assert reference_offset(params, theta, expected - 0.03) == pytest.approx(0.03, abs=1e-12)
    # only the items each reference answered count
    observed = np.zeros((15, 300), dtype=bool)
    observed[:, :100] = True
    partial = probability(theta, params)[:, :100].mean(axis=1)
    assert reference_offset(params, theta, partial, observed) == pytest.approx(0.0, abs=1e-12)
    assert reference_offset(params, np.array([np.nan]), np.array([0.5])) == 0.0
    with pytest.raises(CatError):
        reference_offset(params, theta, expected[:3])
