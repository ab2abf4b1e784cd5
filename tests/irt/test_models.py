"""The 1PL–4PL functions: values, gradients and information against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irt.errors import ParamsError
from irt.models import (
    ItemParams,
    ModelKind,
    dprob_dtheta,
    information,
    item_gradient,
    log_likelihood,
    log_probabilities,
    probability,
    theta_score,
)
from irt.models import test_information as total_information

THETA = np.linspace(-3, 3, 7)


def four_pl() -> ItemParams:
    return ItemParams.create(
        [0.6, 1.3, 2.2], [-1.0, 0.2, 1.4], [0.05, 0.2, 0.1], [0.97, 0.9, 0.99], model="4pl"
    )


def test_probability_matches_the_formula() -> None:
    p = four_pl()
    got = probability(THETA, p)
    z = p.a * (THETA[:, None] - p.b)
    want = p.c + (p.d - p.c) / (1 + np.exp(-z))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert got.shape == (7, 3)


def test_probability_at_b_is_midway_between_asymptotes() -> None:
    p = four_pl()
    mid = np.diag(probability(p.b, p))
    np.testing.assert_allclose(mid, (p.c + p.d) / 2, rtol=1e-12)


def test_log_probabilities_stay_finite_far_from_the_item() -> None:
    p = ItemParams.create([3.0], [0.0], model="2pl")
    log_p, log_q = log_probabilities([-400.0, 400.0], p)
    assert np.all(np.isfinite(log_p)) and np.all(np.isfinite(log_q))
    # log σ(−1200) = −1200 exactly in double precision.
    assert log_p[0, 0] == pytest.approx(-1200.0)
    assert log_q[1, 0] == pytest.approx(-1200.0)


@pytest.mark.parametrize("kind", list(ModelKind))
def test_log_probabilities_agree_with_probability(kind: ModelKind) -> None:
    p = four_pl()
    params = ItemParams.create(
        p.a,
        p.b,
        p.c if kind.has_guessing else None,
        p.d if kind.has_slipping else None,
        model=kind,
    )
    log_p, log_q = log_probabilities(THETA, params)
    prob = probability(THETA, params)
    np.testing.assert_allclose(np.exp(log_p), prob, rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_q), 1 - prob, rtol=1e-10)


def test_theta_derivative_matches_finite_differences() -> None:
    p = four_pl()
    h = 1e-6
    numeric = (probability(THETA + h, p) - probability(THETA - h, p)) / (2 * h)
    np.testing.assert_allclose(dprob_dtheta(THETA, p), numeric, rtol=1e-6, atol=1e-10)


def test_score_matches_finite_differences_of_the_log_likelihood() -> None:
    rng = np.random.default_rng(0)
    p = four_pl()
    y = (rng.random((7, 3)) < 0.5).astype(float)
    y[2, 1] = np.nan  # a missing answer is skipped
    h = 1e-6
    numeric = (log_likelihood(y, THETA + h, p) - log_likelihood(y, THETA - h, p)) / (2 * h)
    np.testing.assert_allclose(theta_score(y, THETA, p), numeric, rtol=1e-6, atol=1e-8)


def _with(p: ItemParams, name: str, j: int, delta: float) -> ItemParams:
    values = {k: getattr(p, k).copy() for k in "abcd"}
    values[name][j] += delta
    return ItemParams.create(values["a"], values["b"], values["c"], values["d"], model=p.model)


def test_item_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    p = four_pl()
    theta = rng.normal(size=50)
    y = (rng.random((50, 3)) < probability(theta, p)).astype(float)
    grad = item_gradient(y, theta, p)
    h = 1e-6
    for k, name in enumerate("abcd"):
        for j in range(3):
            up = log_likelihood(y, theta, _with(p, name, j, h)).sum()
            down = log_likelihood(y, theta, _with(p, name, j, -h)).sum()
            assert grad[j, k] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6)


def test_information_equals_expected_squared_score() -> None:
    # I(θ) = E[(∂ log p(y|θ)/∂θ)²] over y ∈ {0, 1}; the closed form must agree.
    p = four_pl()
    prob = probability(THETA, p)
    dp = dprob_dtheta(THETA, p)
    expected = prob * (dp / prob) ** 2 + (1 - prob) * (dp / (1 - prob)) ** 2
    np.testing.assert_allclose(information(THETA, p), expected, rtol=1e-10)


def test_information_matches_the_design_formula() -> None:
    p = four_pl()
    prob = probability(THETA, p)
    formula = (
        p.a**2 * (prob - p.c) ** 2 * (p.d - prob) ** 2 / ((p.d - p.c) ** 2 * prob * (1 - prob))
    )
    np.testing.assert_allclose(information(THETA, p), formula, rtol=1e-10)
    np.testing.assert_allclose(total_information(THETA, p), formula.sum(axis=1), rtol=1e-10)


def test_two_pl_information_peaks_at_b_with_a_squared_over_four() -> None:
    p = ItemParams.create([1.7], [0.3], model="2pl")
    assert information([0.3], p)[0, 0] == pytest.approx(1.7**2 / 4)


@settings(max_examples=60, deadline=None)
@given(
    a=st.floats(0.05, 6.0),
    b=st.floats(-5.0, 5.0),
    c=st.floats(0.0, 0.45),
    theta=st.floats(-30.0, 30.0),
)
def test_functions_are_finite_and_bounded(a: float, b: float, c: float, theta: float) -> None:
    p = ItemParams.create([a], [b], [c], [0.98], model="4pl")
    prob = probability([theta], p)[0, 0]
    assert c - 1e-12 <= prob <= 0.98 + 1e-12
    log_p, log_q = log_probabilities([theta], p)
    assert np.isfinite(log_p).all() and np.isfinite(log_q).all()
    assert np.isfinite(information([theta], p)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": [1.0], "b": [0.0], "c": [0.5], "d": [0.4]}, "c < d"),
        ({"a": [1.0], "b": [np.nan]}, "non-finite"),
        ({"a": [1.0, 2.0], "b": [0.0]}, "1 values for 2 items"),
    ],
)
def test_bad_parameters_are_rejected(kwargs: dict[str, list[float]], message: str) -> None:
    with pytest.raises(ParamsError, match=message):
        ItemParams.create(**kwargs)  # type: ignore[arg-type]


def test_model_names_are_case_insensitive() -> None:
    assert ModelKind("3PL") is ModelKind.THREE_PL
