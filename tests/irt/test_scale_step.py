"""The parameter-expansion step of binary EM (``irt.em.standardize_scale``): the
posteriors' moments without item priors, the best scale for population and priors
together with them, and EM that converges on long tests under the 3PL's priors."""

from __future__ import annotations

import numpy as np
import pytest

from irt.em import EMCalibrator, _prior_aware_scale, _rescaled, standardize_scale
from irt.models import ModelKind
from irt.mstep import MStepSpec, log_prior
from irt.priors import ItemPriors
from irt.quadrature import normal_grid
from irt.simulate import random_params, simulate_responses


def _setting(priors: ItemPriors) -> tuple[np.ndarray, np.ndarray, np.ndarray, MStepSpec]:
    rng = np.random.default_rng(5)
    points = normal_grid().points
    # Posteriors of 200 subjects centred around 0.3 with spread 1.4.
    centres = 0.3 + 1.4 * rng.normal(size=200)
    posterior = np.exp(-0.5 * ((points[None, :] - centres[:, None]) / 0.4) ** 2)
    posterior /= posterior.sum(axis=1, keepdims=True)
    spec = MStepSpec(model=ModelKind.THREE_PL, priors=priors, theta=points)
    coords = np.column_stack(
        [rng.normal(0.2, 0.3, 50), rng.normal(0, 1.5, 50), np.full(50, -2.0), np.zeros(50)]
    )
    return coords, posterior, points, spec


def test_without_item_priors_the_scale_is_the_posteriors_moments() -> None:
    coords, posterior, points, spec = _setting(ItemPriors.none())
    mean = posterior @ points
    var = float((posterior @ points**2).mean() - mean.mean() ** 2)
    expected = _rescaled(coords, float(mean.mean()), float(np.sqrt(var)), spec)
    np.testing.assert_allclose(standardize_scale(coords, posterior, points, spec), expected)


def test_with_item_priors_the_scale_maximises_population_and_priors() -> None:
    coords, posterior, points, spec = _setting(ItemPriors.default_for("3pl").for_model("3pl"))
    mean_n, second_n = posterior @ points, posterior @ points**2

    def objective(mu: float, sigma: float) -> float:
        spread = np.sum(second_n - 2 * mu * mean_n + mu**2)
        population = -mean_n.size * np.log(sigma) - spread / (2 * sigma**2)
        return float(population + log_prior(_rescaled(coords, mu, sigma, spec), spec).sum())

    mu, sigma = _prior_aware_scale(coords, mean_n, second_n, spec)
    # Not the moments alone: the priors pull (the moments are about 0.3 and 1.45).
    assert abs(mu - mean_n.mean()) > 1e-3
    best = objective(mu, sigma)
    for d_mu, d_sigma in ((1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3)):
        assert objective(mu + d_mu, sigma + d_sigma) < best


def test_long_tests_converge_in_few_cycles_under_the_3pl_priors() -> None:
    # 300 subjects x 1,500 items: every posterior far narrower than the grid, where the
    # N(0, 1) population alone pins the scale; plain EM crawled along it for hundreds
    # of cycles (2,000 x 3,000: 150 cycles unconverged).
    rng = np.random.default_rng(11)
    truth = random_params(1_500, rng, "3pl")
    responses = simulate_responses(truth, rng.normal(size=300), rng)
    fit = EMCalibrator("3pl", max_iter=100).fit(responses)
    assert fit.converged_ and fit.n_iter_ <= 20
    assert np.corrcoef(fit.params_.b, truth.b)[0, 1] > 0.95
    # The fit's log posterior never fell from one cycle's start to the next.
    trace = np.array(fit.trace_)
    assert np.all(np.diff(trace) > -1e-6 * np.abs(trace[1:]))


@pytest.mark.parametrize("model", ["2pl", "3pl"])
def test_the_expansion_leaves_short_test_fits_at_their_mode(model: str) -> None:
    rng = np.random.default_rng(2)
    truth = random_params(20, rng, model)
    responses = simulate_responses(truth, rng.normal(size=500), rng)
    priors = ItemPriors() if model == "2pl" else None
    fit = EMCalibrator(model, priors=priors, tol=1e-6).fit(responses)
    loose = EMCalibrator(model, priors=priors, tol=1e-6, max_iter=2000)
    assert fit.converged_
    assert loose.fit(responses).logpost_ == pytest.approx(fit.logpost_, abs=1e-6)
