"""The vectorised adaptive-test simulation and its stopping rules."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from cat.engine.estimators import MAPEstimator, MLEstimator
from cat.engine.selection import MaxInfo, PoolInfo, RandomItem
from cat.engine.simulation import CATDesign, replay_cat, simulate_cat
from cat.engine.stopping import MAX_LENGTH, POOL_EXHAUSTED, SE_TARGET, StoppingRule
from cat.errors import CatError
from irt.responses import MISSING, ResponseMatrix
from irt.simulate import random_params, simulate_responses


@pytest.fixture(scope="module")
def params():  # type: ignore[no-untyped-def]
    return random_params(1000, np.random.default_rng(0), "3pl")


def test_mfi_beats_random_and_errors_match_the_reported_se(params) -> None:  # type: ignore[no-untyped-def]
    theta = np.random.default_rng(1).normal(size=150)
    pool = PoolInfo.build(params)
    rule = StoppingRule(max_items=60)
    mfi = simulate_cat(
        params, theta, CATDesign(MaxInfo(), MLEstimator(), rule), np.random.default_rng(2), pool
    )
    rnd = simulate_cat(
        params, theta, CATDesign(RandomItem(), MLEstimator(), rule), np.random.default_rng(2), pool
    )
    rmse_mfi = float(np.sqrt(np.mean((mfi.theta_hat - theta) ** 2)))
    rmse_rnd = float(np.sqrt(np.mean((rnd.theta_hat - theta) ** 2)))
    assert rmse_mfi < 0.8 * rmse_rnd
    assert rmse_mfi == pytest.approx(float(np.sqrt(np.mean(mfi.se**2))), rel=0.25)
    # RMSE ≈ 0.2 with θ ~ N(0, 1) gives τ ≈ (2/π) arcsin(0.98) ≈ 0.87.
    assert kendalltau(theta, mfi.theta_hat)[0] > 0.8
    assert set(mfi.stop_reason) == {MAX_LENGTH}
    assert (mfi.n_items == 60).all()
    for row in mfi.items:  # never an item twice
        assert len(set(row.tolist())) == 60


def test_se_target_and_min_length(params) -> None:  # type: ignore[no-untyped-def]
    theta = np.random.default_rng(3).normal(size=60)
    rule = StoppingRule(max_items=200, se_target=0.3, min_items=15)
    res = simulate_cat(
        params, theta, CATDesign(MaxInfo(), MAPEstimator(), rule), np.random.default_rng(4)
    )
    assert (res.n_items >= 15).all()
    stopped_on_se = np.array([r == SE_TARGET for r in res.stop_reason])
    assert stopped_on_se.any()
    assert (res.se[stopped_on_se] <= 0.3).all()
    assert (res.n_items[~stopped_on_se] == 200).all()


def test_small_pool_is_exhausted() -> None:
    params = random_params(12, np.random.default_rng(5), "2pl")
    design = CATDesign(MaxInfo(), MLEstimator(), StoppingRule(max_items=50))
    res = simulate_cat(params, np.zeros(3), design, np.random.default_rng(6))
    assert (res.n_items == 12).all()
    assert set(res.stop_reason) <= {POOL_EXHAUSTED, MAX_LENGTH}


def test_same_seed_same_tests(params) -> None:  # type: ignore[no-untyped-def]
    theta = np.linspace(-2, 2, 20)
    run = [
        simulate_cat(
            params,
            theta,
            CATDesign(MaxInfo(), MLEstimator(), StoppingRule(30)),
            np.random.default_rng(7),
        )
        for _ in range(2)
    ]
    assert (run[0].items == run[1].items).all()
    assert np.array_equal(run[0].theta_hat, run[1].theta_hat)


def test_exposure_counts_each_given_item(params) -> None:  # type: ignore[no-untyped-def]
    res = simulate_cat(
        params,
        np.zeros(10),
        CATDesign(MaxInfo(), MLEstimator(), StoppingRule(5)),
        np.random.default_rng(8),
    )
    exposure = res.exposure(params.n_items)
    assert exposure.sum() == pytest.approx(5.0)  # 5 items per examinee, 10 examinees, / 10
    assert exposure.max() <= 1.0


@pytest.mark.parametrize(
    "kwargs", [{"max_items": 0}, {"max_items": 5, "min_items": 6}, {"se_target": 0.0}]
)
def test_bad_stopping_rules_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(CatError):
        StoppingRule(**kwargs)  # type: ignore[arg-type]


def test_batches_of_k_items_cost_little_precision(params) -> None:  # type: ignore[no-untyped-def]
    theta = np.random.default_rng(10).normal(size=120)
    pool = PoolInfo.build(params)
    rmse = {}
    for k in (1, 10):
        res = simulate_cat(
            params,
            theta,
            CATDesign(MaxInfo(), MLEstimator(), StoppingRule(60), batch_size=k),
            np.random.default_rng(11),
            pool,
        )
        assert (res.n_items == 60).all()
        assert all(len(set(row.tolist())) == 60 for row in res.items)
        rmse[k] = float(np.sqrt(np.mean((res.theta_hat - theta) ** 2)))
    assert rmse[10] < 1.25 * rmse[1]
    with pytest.raises(CatError):
        simulate_cat(
            params,
            theta,
            CATDesign(MaxInfo(), MLEstimator(), StoppingRule(5), batch_size=0),
            np.random.default_rng(0),
            pool,
        )


def test_replay_asks_only_answered_items_and_uses_the_record(params) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(12)
    theta = rng.normal(size=30)
    data = simulate_responses(params, theta, rng, missing_rate=0.4)
    values = data.values.copy()
    values[0, 25:] = MISSING  # subject 0 answered only some of the first 25 items
    data = ResponseMatrix(data.subject_ids, data.item_ids, values)
    res = replay_cat(
        params,
        data,
        CATDesign(MaxInfo(), MLEstimator(), StoppingRule(40)),
        np.random.default_rng(13),
    )
    for k in range(30):
        asked = res.items[k][res.items[k] >= 0]
        assert data.observed[k, asked].all()
        assert (res.right[k, : len(asked)] == (data.values[k, asked] == 1)).all()
    n0 = int(data.observed[0].sum())
    assert res.n_items[0] == n0 < 40 and res.stop_reason[0] == POOL_EXHAUSTED
    assert (res.n_items[1:] == 40).all()
    assert kendalltau(theta[1:], res.theta_hat[1:])[0] > 0.6
