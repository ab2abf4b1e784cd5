"""Difficulty per period at known θ, and the drift z-test."""

from __future__ import annotations

import numpy as np

from irt.linking.drift import difficulty_given_theta, drift_test
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


def answers_with_shift(
    params: ItemParams,
    shifted: np.ndarray,
    drop: float,
    n_subjects: int,
    rng: np.random.Generator,
    prefix: str = "s",
) -> ResponseMatrix:
    """Answers of N(0, 1) subjects to ``params``' items, with the ``shifted`` items
    ``drop`` easier (0: none)."""
    theta = rng.normal(size=n_subjects)
    p = probability(theta, params)
    if drop:
        easier = ItemParams.create(params.a, params.b - drop, params.c, item_ids=params.item_ids)
        p[:, shifted] = probability(theta, easier)[:, shifted]
    values = (rng.random(p.shape) < p).astype(np.int8)
    subjects = tuple(f"{prefix}{k}" for k in range(n_subjects))
    return ResponseMatrix(subjects, params.item_ids, values)


def test_drift_test_finds_shifted_items_and_purifies() -> None:
    rng = np.random.default_rng(2)
    true = random_params(120, rng)
    shifted = np.arange(0, 120, 6)  # 20 items, 1.5 easier later
    earlier = answers_with_shift(true, shifted, 0.0, 300, rng)
    later = answers_with_shift(true, shifted, 1.5, 300, rng)
    test = drift_test(earlier, later, true)
    flagged = np.flatnonzero(test.p_adjusted < 0.05)
    assert len(set(flagged) & set(shifted)) >= 18
    assert len(set(flagged) - set(shifted)) <= 2
    assert (test.z[shifted] < 0).all() and test.scored_on_items < 120
    assert test.tested.all()
