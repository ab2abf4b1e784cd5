"""The mirt design's selection: the summed drop of the scenarios' predicted-accuracy
variances, checked against the variances computed directly."""

from __future__ import annotations

import numpy as np

from cat.designs.low_rank import LowRankModel
from cat.designs.scenario_design import ScenarioFactorTest


def _model(rng: np.random.Generator) -> tuple[LowRankModel, np.ndarray]:
    n_items, s = 30, 3
    codes = np.repeat(np.arange(s), n_items // s)
    loadings = np.zeros((n_items, s))
    loadings[np.arange(n_items), codes] = rng.uniform(0.5, 2.0, n_items)
    corr = np.array([[1.0, 0.7, 0.4], [0.7, 1.0, 0.5], [0.4, 0.5, 1.0]])
    model = LowRankModel(
        loadings,
        rng.normal(0, 1, n_items),
        np.zeros(s),
        np.linalg.inv(corr),
        rng.uniform(0.05, 0.25, n_items),
    )
    return model, codes


def _summed_variance(test: ScenarioFactorTest, cov: np.ndarray, asked: np.ndarray) -> float:
    """Σ_s Var(predicted accuracy of s) by its definition: the unasked items' Bernoulli
    variances plus gᵀΣg through θ, each over n_s²."""
    p, slope, _ = test._slopes_and_weights(np.array([0]))
    p, slope = p[0], slope[0]
    v = test.model.loadings
    total = 0.0
    for s in range(test.masks.shape[0]):
        mine = (test.codes == s) & ~asked
        g = (slope * mine) @ v
        n_s = float((test.codes == s).sum())
        total += (np.sum(p * (1 - p) * mine) + g @ cov @ g) / n_s**2
    return total


def test_the_chosen_item_most_reduces_the_summed_scenario_variance() -> None:
    rng = np.random.default_rng(2)
    model, codes = _model(rng)
    test = ScenarioFactorTest(model, np.ones((1, 30), dtype=bool), 10, codes)
    for item, right in ((0, 1.0), (12, 0.0), (25, 1.0)):  # a few answers first
        test.record(np.array([0]), np.array([item]), np.array([right]))
    test.refit(np.array([0]))
    cov = test.cov[0]
    asked = ~test.available[0]
    before = _summed_variance(test, cov, asked)
    _, _, weight = test._slopes_and_weights(np.array([0]))
    drops = np.full(30, -np.inf)
    for j in np.flatnonzero(~asked):
        v = model.loadings[j]
        new_cov = cov - np.outer(cov @ v, cov @ v) * weight[0, j] / (1 + weight[0, j] * v @ cov @ v)
        after = asked.copy()
        after[j] = True
        drops[j] = before - _summed_variance(test, new_cov, after)
    chosen = int(test.select(np.array([0]))[0, 0])
    assert chosen == int(np.argmax(drops))
    assert not asked[chosen]
