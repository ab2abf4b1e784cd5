"""``irt.estimation.em_loop.run_em``'s stopping rule: parameters settled, the log
posterior stopped rising (naming the parameter that still moves), or the cycle cap."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.estimation.em_loop import (
    LOGLIK_WINDOW,
    STOPPED_CAP,
    STOPPED_LOGLIK,
    STOPPED_PARAMETERS,
    Evaluated,
    max_abs_change,
    run_em,
)
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from irt.types import FloatArray


@dataclass(frozen=True)
class _Value:
    loglik: float


class _Ridge:
    """x₀ runs to +∞ by ``step`` a cycle along log posterior −exp(−x₀), which it never
    reaches; x₁ converges to 1 at rate ``rate``."""

    def __init__(self, step: float, rate: float = 0.5) -> None:
        self.step, self.rate = step, rate

    def evaluate(self, x: FloatArray) -> Evaluated[_Value]:
        value = -float(np.exp(-x[0])) - (x[1] - 1.0) ** 2
        return Evaluated(_Value(value), value)

    def update(self, x: FloatArray, evaluation: Evaluated[_Value]) -> FloatArray:
        return np.array([x[0] + self.step, 1.0 + self.rate * (x[1] - 1.0)])

    def clip(self, x: FloatArray) -> FloatArray:
        return x

    def change(self, new: FloatArray, old: FloatArray) -> float:
        return max_abs_change(new, old)


def test_a_parameter_on_a_ridge_stops_the_run_once_the_log_posterior_is_flat() -> None:
    run = run_em(_Ridge(0.05), np.zeros(2), tol=1e-4, max_iter=10_000, accelerate=False)
    # The log posterior has stopped moving; the parameters have not converged.
    assert run.stopped == STOPPED_LOGLIK and not run.converged
    # The rise over a window first drops below its size × 1e-4 about where
    # 0.05·e^(−x₀) < 1e-4; the rule looks once a window.
    first = int(np.ceil(np.log(0.05 / 1e-4) / 0.05))
    assert first <= run.n_iter <= first + 2 * LOGLIK_WINDOW + 1
    assert run.drift is not None and run.drift.name == "coordinate 0 of the parameter vector"
    assert run.drift.per_cycle == pytest.approx(0.05)
    assert run.drift.value == pytest.approx(run.x[0])


def test_a_settling_run_stops_on_its_parameters_and_names_nothing() -> None:
    run = run_em(_Ridge(0.0), np.zeros(2), tol=1e-4, max_iter=10_000, accelerate=False)
    assert run.stopped == STOPPED_PARAMETERS and run.converged and run.drift is None
    assert run.x[1] == pytest.approx(1.0, abs=1e-4)


def test_a_slow_climb_that_still_gains_runs_to_the_cap() -> None:
    # The log posterior rises 1e-2 a cycle (far above tol): no stall, the cap stops it.
    run = run_em(_Ridge(0.01), np.array([-10.0, 1.0]), tol=1e-4, max_iter=50, accelerate=False)
    assert run.stopped == STOPPED_CAP and not run.converged and run.n_iter == 50


class _FlatBowl:
    """A regular optimum at x = 1 so flat that the log posterior gains less than
    1e-4 a cycle long before EM's geometric steps (rate 0.9) settle."""

    def evaluate(self, x: FloatArray) -> Evaluated[_Value]:
        value = -1e-3 * float((x[0] - 1.0) ** 2)
        return Evaluated(_Value(value), value)

    def update(self, x: FloatArray, evaluation: Evaluated[_Value]) -> FloatArray:
        return 1.0 + 0.9 * (x - 1.0)

    def clip(self, x: FloatArray) -> FloatArray:
        return x

    def change(self, new: FloatArray, old: FloatArray) -> float:
        return max_abs_change(new, old)


def test_a_slow_regular_approach_is_not_called_a_ridge() -> None:
    # Its moves shrink (by 0.9 a step): it runs on until
    # the parameters settle, as R mirt's rule has it.
    run = run_em(_FlatBowl(), np.zeros(1), tol=1e-4, max_iter=10_000, accelerate=False)
    assert run.stopped == STOPPED_PARAMETERS and run.converged and run.drift is None
    assert run.x[0] == pytest.approx(1.0, abs=1e-3)


def test_em_names_the_item_whose_intercept_runs_away_and_warns() -> None:
    # Without priors, an item every subject got right has no finite intercept.
    rng = np.random.default_rng(3)
    data = simulate_responses(random_params(10, rng, "2pl"), rng.normal(size=40), rng)
    values = data.values.copy()
    values[:, 3] = 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = EMCalibrator("2pl", priors=ItemPriors.none()).fit(
            ResponseMatrix.from_array(values, item_ids=data.item_ids)
        )
    assert not fit.converged_ and fit.stopped_ == STOPPED_LOGLIK and fit.n_iter_ < 200
    assert fit.drift_ is not None and fit.drift_.name == f"intercept of item {data.item_ids[3]}"
    ridge = [w for w in caught if "still moved" in str(w.message)]
    assert ridge[0].category is ConvergenceWarning
    assert len(ridge) == 1 and data.item_ids[3] in str(ridge[0].message)


def test_a_well_posed_fit_stops_on_its_parameters() -> None:
    rng = np.random.default_rng(4)
    data = simulate_responses(random_params(20, rng, "2pl"), rng.normal(size=1000), rng)
    fit = EMCalibrator("2pl").fit(data)
    assert fit.stopped_ == STOPPED_PARAMETERS and fit.drift_ is None
