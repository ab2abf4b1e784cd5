"""The shared estimators of ``irt.estimation.scoring`` know nothing of items: fed a
likelihood whose posterior is known in closed form, they must return it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from irt.estimation.scoring import (
    NormalPrior,
    eap_around_mode,
    eap_on_grid,
    grid_mode,
    mode_sd,
    posterior_mode,
    weighted_likelihood,
)
from irt.structures import Grid
from irt.types import FloatArray, IntArray


@dataclass(frozen=True)
class _NormalMeasurements:
    """Row r observed x_ri ~ N(θ_r, s²), i = 1..n_r: ℓ_r(θ) = −½ Σ_i (x_ri − θ)²/s²."""

    total: FloatArray  # Σ_i x_ri
    square: FloatArray  # Σ_i x_ri²
    count: FloatArray  # n_r
    s: float

    def at_nodes(self, nodes: FloatArray) -> FloatArray:
        return self.at_matrix(nodes[None, :])

    def at(self, theta: FloatArray) -> FloatArray:
        return self.at_matrix(theta[:, None])[:, 0]

    def at_matrix(self, theta: FloatArray) -> FloatArray:
        sq = self.square[:, None] - 2 * theta * self.total[:, None] + self.count[:, None] * theta**2
        return np.asarray(-0.5 * sq / self.s**2)

    def score_information(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        return (self.total - self.count * theta) / self.s**2, self.count / self.s**2

    def rows(self, index: IntArray) -> _NormalMeasurements:
        return _NormalMeasurements(self.total[index], self.square[index], self.count[index], self.s)

    def warm_terms(self, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        score, info = self.score_information(theta)
        return score, info, np.zeros_like(theta)


def _sample() -> _NormalMeasurements:
    rng = np.random.default_rng(11)
    count = np.array([1.0, 3.0, 10.0, 400.0])
    truth = np.array([-1.5, 0.3, 2.0, 0.7])
    x = [rng.normal(t, 0.8, int(n)) for t, n in zip(truth, count, strict=True)]
    return _NormalMeasurements(
        np.array([v.sum() for v in x]), np.array([(v**2).sum() for v in x]), count, 0.8
    )


def _conjugate(data: _NormalMeasurements, prior: NormalPrior) -> tuple[FloatArray, FloatArray]:
    precision = data.count / data.s**2 + prior.precision
    mean = (data.total / data.s**2 + prior.mean * prior.precision) / precision
    return mean, 1.0 / np.sqrt(precision)


def test_map_and_its_sd_are_the_conjugate_posterior_mode_and_sd() -> None:
    data, prior = _sample(), NormalPrior(0.5, 1.3)
    mean, sd = _conjugate(data, prior)
    mode = posterior_mode(data, grid_mode(data, (-6, 6), prior), (-6, 6), prior)
    np.testing.assert_allclose(mode, mean, atol=1e-10)
    np.testing.assert_allclose(mode_sd(data, mode, prior), sd, rtol=1e-12)


def test_both_eaps_are_the_conjugate_posterior_mean_and_sd() -> None:
    data, prior = _sample(), NormalPrior(-0.2, 0.9)
    mean, sd = _conjugate(data, prior)
    around, around_sd = eap_around_mode(data, mean + 0.01, (-6, 6), prior)
    np.testing.assert_allclose(around, mean, atol=1e-6)
    np.testing.assert_allclose(around_sd, sd, rtol=1e-4)
    # A fixed grid resolves the three short rows; the 400-answer row (SD 0.04) is what
    # the mode-centred grid is for.
    nodes = np.linspace(-6, 6, 601)
    grid = Grid.of(nodes, prior.log_density(nodes) - np.logaddexp.reduce(prior.log_density(nodes)))
    fixed, fixed_sd = eap_on_grid(data.at_nodes(nodes), grid)
    np.testing.assert_allclose(fixed[:3], mean[:3], atol=1e-8)
    np.testing.assert_allclose(fixed_sd[:3], sd[:3], rtol=1e-6)


def test_ml_and_wle_without_a_prior_are_the_sample_means() -> None:
    data = _sample()
    ml = posterior_mode(data, grid_mode(data, (-6, 6), None), (-6, 6), None)
    wle, found = weighted_likelihood(data, ml, (-6, 6))
    np.testing.assert_allclose(ml, data.total / data.count, atol=1e-10)
    assert found.all()
    np.testing.assert_allclose(wle, data.total / data.count, atol=1e-10)


@dataclass(frozen=True)
class _Rising:
    """ℓ(θ) = kθ: no maximum and no curvature (a perfect score's likelihood, in
    caricature), so the search must step uphill and stop at the bound."""

    k: FloatArray

    def at_nodes(self, nodes: FloatArray) -> FloatArray:
        return np.asarray(self.k[:, None] * nodes[None, :])

    def at(self, theta: FloatArray) -> FloatArray:
        return np.asarray(self.k * theta)

    def score_information(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.k.copy(), np.zeros_like(theta)

    def rows(self, index: IntArray) -> _Rising:
        return _Rising(self.k[index])


@pytest.mark.parametrize("start", [-3.0, 0.0, 5.5])
def test_a_mode_that_does_not_exist_ends_at_the_bound_it_climbs_to(start: float) -> None:
    rising = _Rising(np.array([2.0, -0.5]))
    mode = posterior_mode(rising, np.full(2, start), (-4.0, 6.0), None)
    np.testing.assert_array_equal(mode, [6.0, -4.0])
    assert np.isnan(mode_sd(rising, mode, None)).all()
