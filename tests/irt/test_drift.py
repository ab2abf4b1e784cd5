"""Difficulty per period at known θ, and the drift z-test."""

from __future__ import annotations

import numpy as np

from irt.drift import difficulty_given_theta
from irt.models import ItemParams, probability
from irt.simulate import random_params


def test_b_is_recovered_with_an_honest_standard_error() -> None:
    rng = np.random.default_rng(0)
    true = random_params(200, rng)
    theta = rng.normal(size=1500)
    p = probability(theta, true)
    x = (rng.random(p.shape) < p).astype(np.float64)
    start = ItemParams.create(true.a, np.zeros(200), true.c, item_ids=true.item_ids)
    b, se = difficulty_given_theta(x, np.ones_like(x), theta, start)
    z = (b - true.b) / se
    assert abs(float(z.mean())) < 0.2
    assert 0.8 < float(z.std()) < 1.2
    assert se.max() < 0.5


def test_everyone_right_stays_finite_under_the_prior() -> None:
    true = random_params(3, np.random.default_rng(1))
    x = np.ones((30, 3))
    b, se = difficulty_given_theta(x, np.ones_like(x), np.linspace(-2, 2, 30), true)
    assert np.isfinite(b).all() and (b < true.b).all() and np.isfinite(se).all()
