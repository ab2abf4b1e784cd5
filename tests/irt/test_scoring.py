"""Ability scoring: EAP, MAP, ML, WLE against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest

from irt.errors import IRTError
from irt.estimation.scoring import warm_function
from irt.models import ItemParams, log_likelihood
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, _Data, score_abilities
from irt.simulate import random_params, simulate_responses


def _brute_posterior(
    responses: ResponseMatrix, params: ItemParams, row: int, grid: np.ndarray
) -> np.ndarray:
    y = np.tile(responses.as_float()[row], (grid.size, 1))
    log_post = log_likelihood(y, grid, params) - 0.5 * grid**2
    w = np.exp(log_post - log_post.max())
    return w / w.sum()


def _fine_grid(responses: ResponseMatrix, params: ItemParams, row: int) -> np.ndarray:
    """A grid fine enough for the posterior: ±1 around a coarse mode for long tests."""
    coarse = np.linspace(-6, 6, 1201)
    w = _brute_posterior(responses, params, row, coarse)
    centre = float(coarse[w.argmax()])
    if responses.n_items < 100:
        return np.linspace(-6, 6, 12001)
    return np.linspace(centre - 1, centre + 1, 8001)


@pytest.mark.parametrize("n_items", [10, 2000])
def test_eap_and_map_match_a_brute_force_posterior(n_items: int) -> None:
    rng = np.random.default_rng(n_items)
    params = random_params(n_items, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=4), rng)
    eap = score_abilities(data, params, "eap")
    map_ = score_abilities(data, params, "map")
    for row in range(4):
        fine = _fine_grid(data, params, row)
        w = _brute_posterior(data, params, row, fine)
        mean = float(w @ fine)
        sd = float(np.sqrt(w @ (fine - mean) ** 2))
        assert eap.theta[row] == pytest.approx(mean, abs=max(1e-3 * sd, 1e-5))
        assert eap.se[row] == pytest.approx(sd, rel=0.01)
        assert map_.theta[row] == pytest.approx(fine[w.argmax()], abs=1e-3)


def test_ml_solves_the_score_equation_and_falls_back_on_extreme_patterns() -> None:
    rng = np.random.default_rng(1)
    params = random_params(25, rng, "2pl")
    values = simulate_responses(params, rng.normal(size=30), rng).values.copy()
    values[0] = 1
    values[1] = 0
    data = ResponseMatrix.from_array(values.astype(float))
    est = score_abilities(data, params, "ml")
    assert est.fallback[0] and est.fallback[1]
    assert not est.fallback[2:].any()
    h = 1e-5
    for row in range(2, 30):
        y = data.as_float()[row : row + 1]
        slope = (
            log_likelihood(y, [est.theta[row] + h], params)
            - log_likelihood(y, [est.theta[row] - h], params)
        ) / (2 * h)
        assert abs(slope[0]) < 1e-3 or abs(est.theta[row]) >= 6 - 1e-9


def test_wle_is_a_root_and_exists_for_perfect_scores_in_2pl() -> None:
    rng = np.random.default_rng(2)
    params = random_params(20, rng, "2pl")
    values = simulate_responses(params, rng.normal(size=10), rng).values.copy()
    values[0] = 1
    data = ResponseMatrix.from_array(values.astype(float))
    est = score_abilities(data, params, "wle")
    assert not est.fallback.any()  # Warm's correction keeps perfect scores finite
    f = warm_function(_Data.of(data, params), est.theta)
    np.testing.assert_allclose(f, 0.0, atol=1e-6)
    assert est.theta[0] < 6


@pytest.mark.parametrize("method", list(AbilityMethod))
def test_estimates_are_bounded_finite_and_honest(method: AbilityMethod) -> None:
    rng = np.random.default_rng(3)
    params = random_params(40, rng, "3pl")
    theta = rng.normal(size=600)
    est = score_abilities(simulate_responses(params, theta, rng), params, method)
    assert np.all(np.isfinite(est.theta)) and np.all(np.isfinite(est.se))
    assert np.all(np.abs(est.theta) <= 6) and np.all(est.se > 0)
    rmse = float(np.sqrt(np.mean((est.theta - theta) ** 2)))
    assert rmse == pytest.approx(float(np.sqrt(np.mean(est.se**2))), rel=0.25)


def test_subject_without_answers_gets_the_prior() -> None:
    params = ItemParams.create([1.0, 1.5], [0.0, 0.5], model="2pl")
    data = ResponseMatrix.from_array([[np.nan, np.nan], [1, 0]])
    est = score_abilities(data, params, "eap")
    assert est.theta[0] == pytest.approx(0.0, abs=1e-6)
    assert est.se[0] == pytest.approx(1.0, abs=1e-3)
    assert est.n_answered.tolist() == [0, 2]


def test_mismatched_items_are_refused() -> None:
    params = ItemParams.create([1.0], [0.0], model="2pl", item_ids=["x"])
    with pytest.raises(IRTError, match="same items"):
        score_abilities(ResponseMatrix.from_array([[1]]), params)
