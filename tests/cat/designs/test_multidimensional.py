"""The multidimensional designs' selection criteria, each checked against its definition
computed directly (posterior covariances updated by inverting the information, the KL
expectation by a fine grid over θ), and their refusals."""

from __future__ import annotations

import numpy as np
import pytest

from cat.designs.low_rank import LowRankModel
from cat.designs.multidimensional import MultidimensionalTest
from cat.engine.registry import CriterionName
from cat.errors import CatError

N_ITEMS = 30
ROW = np.array([0])


def _scenario_model(rng: np.random.Generator) -> tuple[LowRankModel, np.ndarray]:
    """Three correlated factors, one per scenario, each item on its own, with c."""
    s = 3
    codes = np.repeat(np.arange(s), N_ITEMS // s)
    loadings = np.zeros((N_ITEMS, s))
    loadings[np.arange(N_ITEMS), codes] = rng.uniform(0.5, 2.0, N_ITEMS)
    corr = np.array([[1.0, 0.7, 0.4], [0.7, 1.0, 0.5], [0.4, 0.5, 1.0]])
    model = LowRankModel(
        loadings,
        rng.normal(0, 1, N_ITEMS),
        np.zeros(s),
        np.linalg.inv(corr),
        rng.uniform(0.05, 0.25, N_ITEMS),
    )
    return model, codes


def _bifactor_model(rng: np.random.Generator) -> tuple[LowRankModel, np.ndarray]:
    """A general factor (column 0) and two specific factors, orthogonal."""
    codes = np.repeat(np.arange(2), N_ITEMS // 2)
    loadings = np.zeros((N_ITEMS, 3))
    loadings[:, 0] = rng.uniform(0.8, 2.0, N_ITEMS)
    loadings[np.arange(N_ITEMS), 1 + codes] = rng.uniform(0.2, 1.2, N_ITEMS)
    model = LowRankModel(loadings, rng.normal(0, 1, N_ITEMS), np.zeros(3), np.eye(3))
    return model, codes


def _answered(test: MultidimensionalTest) -> MultidimensionalTest:
    for item, right in ((0, 1.0), (12, 0.0), (25, 1.0), (7, 1.0)):
        test.record(ROW, np.array([item]), np.array([right]))
    test.refit(ROW)
    return test


def _updated(test: MultidimensionalTest, j: int) -> np.ndarray:
    """Σ after asking item j: the inverse of Σ⁻¹ plus its Fisher information."""
    _, _, weight = test._slopes_and_weights(ROW)
    v = test.model.loadings[j]
    return np.asarray(np.linalg.inv(np.linalg.inv(test.cov[0]) + weight[0, j] * np.outer(v, v)))


def _best(test: MultidimensionalTest, value: dict[int, float]) -> None:
    """The chosen item is the available one of largest ``value``."""
    chosen = int(test.select(ROW)[0, 0])
    assert test.available[0, chosen]
    assert chosen == max(value, key=lambda j: value[j])


def _summed_variance(test: MultidimensionalTest, cov: np.ndarray, asked: np.ndarray) -> float:
    """Σ_s Var(predicted accuracy of s) by its definition: the unasked items' Bernoulli
    variances plus gᵀΣg through θ, each over n_s²."""
    assert test.codes is not None
    p, slope, _ = test._slopes_and_weights(ROW)
    p, slope = p[0], slope[0]
    v = test.model.loadings
    total = 0.0
    for s in range(int(test.codes.max()) + 1):
        mine = (test.codes == s) & ~asked
        g = (slope * mine) @ v
        n_s = float((test.codes == s).sum())
        total += (np.sum(p * (1 - p) * mine) + g @ cov @ g) / n_s**2
    return total


def test_profile_asks_the_item_that_most_reduces_the_summed_scenario_variance() -> None:
    model, codes = _scenario_model(np.random.default_rng(2))
    test = _answered(
        MultidimensionalTest(model, np.ones((1, N_ITEMS), bool), 10, CriterionName.PROFILE, codes)
    )
    asked = ~test.available[0]
    before = _summed_variance(test, test.cov[0], asked)
    drops = {}
    for j in np.flatnonzero(~asked):
        after = asked.copy()
        after[j] = True
        drops[int(j)] = before - _summed_variance(test, _updated(test, int(j)), after)
    _best(test, drops)


def test_total_asks_the_item_that_most_reduces_the_predicted_totals_variance() -> None:
    model, _ = _scenario_model(np.random.default_rng(3))
    test = _answered(
        MultidimensionalTest(model, np.ones((1, N_ITEMS), bool), 10, CriterionName.TOTAL)
    )
    asked = ~test.available[0]
    p, slope, _ = test._slopes_and_weights(ROW)

    def variance(cov: np.ndarray, done: np.ndarray) -> float:
        g = (slope[0] * ~done) @ model.loadings
        return float(np.sum(p[0] * (1 - p[0]) * ~done) + g @ cov @ g)

    before = variance(test.cov[0], asked)
    drops = {}
    for j in np.flatnonzero(~asked):
        after = asked.copy()
        after[j] = True
        drops[int(j)] = before - variance(_updated(test, int(j)), after)
    _best(test, drops)


@pytest.mark.parametrize("seed", [4, 5])
def test_d_optimal_asks_the_item_of_largest_posterior_precision_determinant(seed: int) -> None:
    model, _ = _scenario_model(np.random.default_rng(seed))
    test = _answered(
        MultidimensionalTest(model, np.ones((1, N_ITEMS), bool), 10, CriterionName.D_OPTIMAL)
    )
    dets = {
        int(j): float(np.linalg.slogdet(np.linalg.inv(_updated(test, int(j))))[1])
        for j in np.flatnonzero(test.available[0])
    }
    _best(test, dets)


def test_a_optimal_asks_the_item_of_smallest_posterior_trace() -> None:
    model, _ = _scenario_model(np.random.default_rng(6))
    test = _answered(
        MultidimensionalTest(model, np.ones((1, N_ITEMS), bool), 10, CriterionName.A_OPTIMAL)
    )
    traces = {
        int(j): -float(np.trace(_updated(test, int(j)))) for j in np.flatnonzero(test.available[0])
    }
    _best(test, traces)


def test_general_asks_the_item_of_smallest_general_variance_and_differs_from_d() -> None:
    model, _ = _bifactor_model(np.random.default_rng(7))
    can = np.ones((1, N_ITEMS), bool)
    test = _answered(MultidimensionalTest(model, can, 10, CriterionName.GENERAL, general=0))
    variances = {
        int(j): -float(_updated(test, int(j))[0, 0]) for j in np.flatnonzero(test.available[0])
    }
    _best(test, variances)
    # With specific slopes as large as here, D-optimality spends items on the specific
    # factors that the general criterion ignores: over a short test they part ways.
    general = MultidimensionalTest(model, can, 12, CriterionName.GENERAL, general=0)
    d_opt = MultidimensionalTest(model, can, 12, CriterionName.D_OPTIMAL)
    rng = np.random.default_rng(0)
    answers = (rng.random(N_ITEMS) < 0.6).astype(float)
    chosen: list[set[int]] = []
    for test_ in (general, d_opt):
        for _ in range(12):
            j = test_.select(ROW)[0]
            test_.record(ROW, j, answers[j])
            test_.refit(ROW)
        chosen.append(set(np.flatnonzero(~test_.available[0]).tolist()))
    assert chosen[0] != chosen[1]


def test_kl_matches_the_expectation_over_a_fine_grid_of_theta() -> None:
    rng = np.random.default_rng(8)
    s = 2
    codes = np.repeat(np.arange(s), N_ITEMS // s)
    loadings = np.zeros((N_ITEMS, s))
    loadings[np.arange(N_ITEMS), codes] = rng.uniform(0.5, 2.0, N_ITEMS)
    loadings[:, 1 - codes] = rng.uniform(0.0, 0.6, N_ITEMS)  # some cross-loadings
    corr = np.array([[1.0, 0.5], [0.5, 1.0]])
    c = rng.uniform(0.05, 0.25, N_ITEMS)
    model = LowRankModel(loadings, rng.normal(0, 1, N_ITEMS), np.zeros(s), np.linalg.inv(corr), c)
    test = _answered(MultidimensionalTest(model, np.ones((1, N_ITEMS), bool), 10, CriterionName.KL))
    gain = test.gain(ROW)[0]
    u, cov = test.u[0], test.cov[0]
    axis = np.linspace(-7, 7, 281)
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    chol = np.linalg.cholesky(cov)
    theta = u + grid @ chol.T
    dens = np.exp(-0.5 * np.sum(grid**2, axis=1))
    dens /= dens.sum()

    def prob(t: np.ndarray) -> np.ndarray:
        return np.asarray(c + (1 - c) / (1 + np.exp(-(t @ loadings.T + model.intercepts))))

    p0, p = prob(u[None])[0], prob(theta)
    kl = p0 * np.log(p0 / p) + (1 - p0) * np.log((1 - p0) / (1 - p))
    direct = dens @ kl
    np.testing.assert_allclose(gain, direct, rtol=1e-3, atol=1e-7)
    _best(test, {int(j): float(direct[j]) for j in np.flatnonzero(test.available[0])})


def test_every_criterion_asks_distinct_available_items_in_batches() -> None:
    model, codes = _bifactor_model(np.random.default_rng(9))
    for criterion in CriterionName:
        test = MultidimensionalTest(
            model, np.ones((2, N_ITEMS), bool), 10, criterion, codes, general=0
        )
        test.skip(np.array([0]), np.array([3]))
        chosen = test.select(np.array([0, 1]), k=4)
        assert chosen.shape == (2, 4)
        for row in range(2):
            assert len(set(chosen[row].tolist())) == 4
            assert test.available[row, chosen[row]].all()


def test_criteria_that_need_a_structure_refuse_a_model_without_it() -> None:
    model, codes = _scenario_model(np.random.default_rng(10))
    can = np.ones((1, N_ITEMS), bool)
    with pytest.raises(CatError, match="general factor"):
        MultidimensionalTest(model, can, 10, CriterionName.GENERAL)
    with pytest.raises(CatError, match="scenario"):
        MultidimensionalTest(model, can, 10, CriterionName.PROFILE)
    with pytest.raises(CatError, match="one scenario code per item"):
        MultidimensionalTest(model, can, 10, CriterionName.PROFILE, codes[:-1])
