"""Adaptive-test ability estimators on edge patterns and against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.answers import Answers
from cat.engine.estimators import EAPEstimator, MAPEstimator, MLEstimator, WLEEstimator
from cat.errors import CatError
from irt.models import ItemParams, log_likelihood
from irt.simulate import random_params

ESTIMATORS = [MLEstimator(), MAPEstimator(), EAPEstimator(), WLEEstimator()]


def _answers(params: ItemParams, rows: list[list[int]], right: list[list[int]]) -> Answers:
    width = max(len(r) for r in rows)
    items = np.full((len(rows), width), -1)
    resp = np.zeros((len(rows), width))
    for k, (r, y) in enumerate(zip(rows, right, strict=True)):
        items[k, : len(r)] = r
        resp[k, : len(y)] = y
    return Answers.gather(params, items, resp)


@pytest.fixture
def pool() -> ItemParams:
    return random_params(40, np.random.default_rng(0), "3pl")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_edge_patterns_stay_finite_and_bounded(estimator: object, pool: ItemParams) -> None:
    ans = _answers(
        pool,
        [[0], [1], list(range(10)), list(range(10)), [0, 1], list(range(40))],
        [[1], [0], [1] * 10, [0] * 10, [1, 0], [1] * 40],
    )
    theta, se = estimator.estimate(ans, np.zeros(6))  # type: ignore[attr-defined]
    assert np.all(np.isfinite(theta)) and np.all(np.isfinite(se)) and np.all(se > 0)
    assert np.all(np.abs(theta) <= 6)
    # More right answers never lower the estimate.
    assert theta[2] > theta[3]
    assert theta[5] > theta[2]


def test_ml_falls_back_until_the_pattern_is_mixed(pool: ItemParams) -> None:
    ans = _answers(pool, [[0, 1, 2], [0, 1, 2]], [[1, 1, 1], [1, 0, 1]])
    ml, _ = MLEstimator().estimate(ans, np.zeros(2))
    map_, _ = MAPEstimator().estimate(ans, np.zeros(2))
    assert ml[0] == pytest.approx(map_[0])  # all right: the MAP value
    assert ml[1] != pytest.approx(map_[1])  # mixed: a real ML estimate


def test_ml_and_map_match_a_grid_search() -> None:
    params = random_params(60, np.random.default_rng(1), "2pl")
    rng = np.random.default_rng(2)
    y = (rng.random(60) < 0.5).astype(int)
    ans = _answers(params, [list(range(60))], [list(y)])
    grid = np.linspace(-6, 6, 120001)
    ll = log_likelihood(np.tile(y.astype(float), (grid.size, 1)), grid, params)
    ml, _ = MLEstimator().estimate(ans, np.zeros(1))
    assert ml[0] == pytest.approx(grid[ll.argmax()], abs=2e-4)
    post = ll - 0.5 * grid**2
    map_, _ = MAPEstimator().estimate(ans, np.zeros(1))
    assert map_[0] == pytest.approx(grid[post.argmax()], abs=2e-4)
    eap, eap_se = EAPEstimator().estimate(ans, np.zeros(1))
    w = np.exp(post - post.max())
    w /= w.sum()
    assert eap[0] == pytest.approx(float(w @ grid), abs=1e-4)
    assert eap_se[0] == pytest.approx(float(np.sqrt(w @ (grid - w @ grid) ** 2)), rel=1e-3)


def test_one_item_gives_the_prior_side() -> None:
    params = ItemParams.create([1.5], [0.0], model="2pl")
    ans = _answers(params, [[0], [0]], [[1], [0]])
    theta, _ = EAPEstimator().estimate(ans, np.zeros(2))
    assert theta[0] > 0 > theta[1]
    assert theta[0] == pytest.approx(-theta[1])


def test_extreme_items_do_not_break_estimation() -> None:
    params = ItemParams.create([0.01, 8.0, 1.0], [0.0, 5.9, -5.9], [0.0, 0.2, 0.0], model="3pl")
    ans = _answers(params, [[0, 1, 2]], [[0, 1, 1]])
    for estimator in ESTIMATORS:
        theta, se = estimator.estimate(ans, np.zeros(1))  # type: ignore[attr-defined]
        assert np.isfinite(theta).all() and np.isfinite(se).all()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(CatError):
        MAPEstimator(prior_sd=0)
    with pytest.raises(CatError):
        MLEstimator(bounds=(1.0, -1.0))
    with pytest.raises(CatError):
        EAPEstimator(n_nodes=2)
