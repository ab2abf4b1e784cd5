"""Difficulty per period at known θ, and the drift z-test."""

from __future__ import annotations

import numpy as np

from irt.drift import difficulty_given_theta, drift_test
from irt.models import ItemParams, probability
from irt.responses import ResponseMatrix
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


def test_drift_test_finds_shifted_items_and_purifies() -> None:
    rng = np.random.default_rng(2)
    true = random_params(120, rng)
    shifted = np.arange(0, 120, 6)  # 20 items, 1.5 easier later
    easier = ItemParams.create(true.a, true.b - 1.5, true.c, item_ids=true.item_ids)

    def period(params: ItemParams, mix: bool) -> ResponseMatrix:
        theta = rng.normal(size=300)
        p = probability(theta, true)
        if mix:
            p[:, shifted] = probability(theta, params)[:, shifted]
        values = (rng.random(p.shape) < p).astype(np.int8)
        return ResponseMatrix(tuple(f"s{k}" for k in range(300)), true.item_ids, values)

    test = drift_test(period(true, False), period(easier, True), true)
    flagged = np.flatnonzero(test.p_adjusted < 0.05)
    assert len(set(flagged) & set(shifted)) >= 18
    assert len(set(flagged) - set(shifted)) <= 2
    assert (test.z[shifted] < 0).all() and test.scored_on_items < 120
    assert test.tested.all()
