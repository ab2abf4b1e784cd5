"""Standard errors of mixed pools (``irt.mixed_se``): the joint observed information of
the marginal log posterior over the discrete and continuous items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from irt.continuous_se import continuous_standard_errors
from irt.errors import IRTError
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.mixed_se import (
    ContinuousPart,
    DiscretePart,
    JointLogPosterior,
    MixedStandardErrors,
    fit_standard_errors,
    mixed_standard_errors,
)
from irt.polytomous_se import polytomous_standard_errors
from irt.quadrature import normal_grid
from itempool.formats.continuous_params import read_continuous_params, write_continuous_params
from itempool.formats.polytomous_params import read_polytomous_params, write_polytomous_params
from tests.irt.test_mixed import _continuous_pool, _discrete_pool, _simulate, _types


def _fit(
    true: MixedParams, n: int, seed: int, missing: float = 0.05
) -> tuple[MixedResponses, MixedCalibrator]:
    responses, _ = _simulate(true, n, np.random.default_rng(seed), missing=missing)
    disc = None if true.discrete is None else [t.value for t in true.discrete.item_types]
    cont = None if true.continuous is None else _types(true.continuous)
    return responses, MixedCalibrator(disc, cont, tol=1e-6).fit(responses)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    assert np.array_equal(np.isnan(a), np.isnan(b))
    return float(np.nanmax(np.abs(a / b - 1)))


# --- one family alone is that family's standard errors -----------------------------------


def test_discrete_part_alone_matches_polytomous_standard_errors() -> None:
    rng = np.random.default_rng(11)
    true = MixedParams(discrete=_discrete_pool(4, 3, rng, n_3pl=1))
    responses, fit = _fit(true, 600, 1)
    assert responses.discrete is not None and fit.params_.discrete is not None
    se = fit_standard_errors(fit, responses)
    ref = polytomous_standard_errors(responses.discrete, fit.params_.discrete, fit.discrete_priors_)
    assert se.continuous is None and se.discrete is not None
    for name in ("a", "d", "c"):
        assert _relative(getattr(se.discrete, name), getattr(ref, name)) < 1e-4
    assert se.discrete.labels == ref.labels == se.labels
    np.testing.assert_allclose(se.information, ref.information, rtol=1e-6, atol=1e-6)
    assert se.condition_number == pytest.approx(ref.condition_number, rel=1e-4)
    assert se.n_discrete == len(se.labels)


def test_continuous_part_alone_matches_continuous_standard_errors() -> None:
    rng = np.random.default_rng(12)
    true = MixedParams(continuous=_continuous_pool(4, 4, rng))
    responses, fit = _fit(true, 500, 2)
    assert responses.continuous is not None and fit.params_.continuous is not None
    se = fit_standard_errors(fit, responses)
    ref = continuous_standard_errors(
        responses.continuous, fit.params_.continuous, fit.continuous_priors_
    )
    assert se.discrete is None and se.continuous is not None
    for name in ("a", "d", "sigma", "tau"):
        assert _relative(getattr(se.continuous, name), getattr(ref, name)) < 1e-4
    assert se.continuous.labels == ref.labels == se.labels
    np.testing.assert_allclose(se.information, ref.information, rtol=1e-6, atol=1e-6)
    assert se.n_discrete == 0


# --- a mixed pool ------------------------------------------------------------------------


def _mixed_true(seed: int = 5) -> MixedParams:
    rng = np.random.default_rng(seed)
    return MixedParams(discrete=_discrete_pool(5, 5, rng), continuous=_continuous_pool(5, 5, rng))


@pytest.fixture(scope="module")
def mixed_errors() -> tuple[MixedStandardErrors, MixedStandardErrors, MixedCalibrator]:
    """The same pool of 10 discrete and 10 continuous items fitted on 1,000 and 4,000
    subjects."""
    true = _mixed_true()
    small_responses, small = _fit(true, 1000, 21)
    large_responses, large = _fit(true, 4000, 22)
    return (
        fit_standard_errors(small, small_responses),
        fit_standard_errors(large, large_responses),
        small,
    )


def _all(se: MixedStandardErrors) -> np.ndarray:
    assert se.discrete is not None and se.continuous is not None
    d, c = se.discrete, se.continuous
    parts = [d.a, d.d.ravel(), c.a, c.d, c.sigma, c.tau]
    return np.concatenate(parts)  # NaN where an item lacks the parameter


def test_errors_are_positive_finite_and_shrink_as_one_over_root_n(
    mixed_errors: tuple[MixedStandardErrors, MixedStandardErrors, MixedCalibrator],
) -> None:
    small, large, _ = mixed_errors
    assert len(small.labels) == 5 * 2 + 5 * 4 + 10 * 3  # 2PL, graded (4 categories), continuous
    for se in (small, large):
        values = _all(se)
        values = values[~np.isnan(values)]
        assert np.all(np.isfinite(values)) and np.all(values > 0)
        assert 1 < se.condition_number < 1e6
    ratio = _all(large) / _all(small)
    ratio = ratio[~np.isnan(ratio)]
    assert ratio.size == len(small.labels)
    assert ratio.min() > 0.4 and ratio.max() < 0.6
    assert np.median(ratio) == pytest.approx(0.5, abs=0.03)


def test_the_cross_family_block_is_not_zero(
    mixed_errors: tuple[MixedStandardErrors, MixedStandardErrors, MixedCalibrator],
) -> None:
    se, _, _ = mixed_errors
    k = se.n_discrete
    assert se.labels[k - 1].startswith("q") and se.labels[k].startswith("x")
    cross = se.cross_information
    assert cross.shape == (k, len(se.labels) - k)
    # Both families' slopes move the posterior of θ; their coupling is of the order of
    # the items' own information.
    diag = np.sqrt(np.outer(np.diag(se.information)[:k], np.diag(se.information)[k:]))
    assert np.abs(cross / diag).max() > 0.05
    # and it matters: the block-diagonal inverse would give other errors
    assert se.discrete is not None
    block = se.information[:k, :k]
    alone = np.sqrt(np.diag(np.linalg.inv(block)))
    joint = np.sqrt(np.diag(se.covariance)[:k])
    assert np.all(joint >= alone * (1 - 1e-9)) and np.max(joint / alone) > 1.01
    # The family's own result carries its block of the joint information.
    np.testing.assert_array_equal(se.discrete.information, block)


def test_gradient_and_cross_curvature_agree_with_the_log_posterior() -> None:
    """The Fisher-identity gradient is the derivative of the joint log posterior, which
    at the fit is the calibrator's ``logpost_``; a cross entry of the Hessian is the
    mixed second difference of that value."""
    rng = np.random.default_rng(31)
    true = MixedParams(
        discrete=_discrete_pool(2, 2, rng, n_3pl=1), continuous=_continuous_pool(2, 2, rng)
    )
    responses, fit = _fit(true, 600, 32)
    assert responses.discrete is not None and responses.continuous is not None
    assert fit.params_.discrete is not None and fit.params_.continuous is not None
    grid = normal_grid(fit.n_quad, fit.bound)
    objective = JointLogPosterior(
        DiscretePart(
            responses.discrete,
            fit.params_.discrete,
            fit.discrete_priors_,
            grid.points,
            grid.log_weights,
        ),
        ContinuousPart(
            responses.continuous, fit.params_.continuous, fit.continuous_priors_, grid.points
        ),
        grid.log_weights,
    )
    x = objective.start()
    assert objective.value(x) == pytest.approx(fit.logpost_, abs=1e-8)
    assert np.abs(objective.gradient(x)).max() < 0.05  # a maximum (to EM's tolerance)
    moved = x + np.random.default_rng(0).normal(0.0, 0.01, x.size)
    h = 1e-5
    numeric = np.array(
        [
            (objective.value(moved + h * e) - objective.value(moved - h * e)) / (2 * h)
            for e in np.eye(x.size)
        ]
    )
    np.testing.assert_allclose(objective.gradient(moved), numeric, rtol=1e-5, atol=1e-5)
    hess = objective.hessian(x)
    k = len(objective.split(x)[0])
    h = 1e-4
    for i, j in ((0, k), (1, k + 1), (k - 1, x.size - 1)):

        def at(di: float, dj: float, i: int = i, j: int = j) -> float:
            y = x.copy()
            y[i] += di
            y[j] += dj
            return objective.value(y)

        second = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
        assert hess[i, j] == pytest.approx(second, rel=2e-3, abs=2e-3)
        assert abs(hess[i, j]) > 1e-2


def test_errors_match_the_spread_of_estimates_over_replications() -> None:
    true = _mixed_true()
    assert true.continuous is not None
    estimates = []
    for r in range(20):
        responses, _ = _simulate(true, 1000, np.random.default_rng(500 + r))
        p = MixedCalibrator(continuous_types=_types(true.continuous)).fit(responses).params_
        assert p.discrete is not None and p.continuous is not None
        estimates.append(np.concatenate([p.discrete.a, p.discrete.d[:, 0], p.continuous.a]))
    responses, fit = _fit(true, 1000, 500, missing=0.0)
    se = fit_standard_errors(fit, responses)
    assert se.discrete is not None and se.continuous is not None
    predicted = np.concatenate([se.discrete.a, se.discrete.d[:, 0], se.continuous.a])
    ratio = predicted / np.std(estimates, axis=0, ddof=1)
    assert 0.85 < np.median(ratio) < 1.2
    assert ratio.min() > 0.5 and ratio.max() < 2.0


# --- the result --------------------------------------------------------------------------


def test_apply_fills_the_se_columns_and_describe_is_json_ready(
    mixed_errors: tuple[MixedStandardErrors, MixedStandardErrors, MixedCalibrator],
    tmp_path: Path,
) -> None:
    se, _, fit = mixed_errors
    params = se.apply(fit.params_)
    assert params.discrete is not None and params.continuous is not None
    assert se.discrete is not None and se.continuous is not None
    np.testing.assert_array_equal(params.discrete.se_a, se.discrete.a)
    np.testing.assert_array_equal(params.continuous.se_tau, se.continuous.tau)
    np.testing.assert_array_equal(params.discrete.d, fit.params_.discrete.d)  # type: ignore[union-attr]
    # the families' writers store them as se_ columns
    write_polytomous_params(params.discrete, tmp_path / "d.csv")
    write_continuous_params(params.continuous, tmp_path / "c.csv")
    back_d = read_polytomous_params(tmp_path / "d.csv")
    back_c = read_continuous_params(tmp_path / "c.csv")
    assert back_d.se_d is not None and back_c.se_sigma is not None
    np.testing.assert_allclose(back_d.se_d, se.discrete.d, rtol=1e-6)
    np.testing.assert_allclose(back_c.se_sigma, se.continuous.sigma, rtol=1e-6)
    described = json.loads(json.dumps(se.describe()))
    assert described["standard_errors"] == "oakes"
    assert described["n_parameters"] == len(se.labels)
    assert described["condition_number"] == pytest.approx(se.condition_number)
    other = MixedParams(discrete=fit.params_.discrete)
    with pytest.raises(IRTError, match="same parts"):
        se.apply(other)


def test_bad_input_is_refused() -> None:
    true = _mixed_true()
    responses, fit = _fit(true, 200, 3)
    with pytest.raises(IRTError, match="same items"):
        mixed_standard_errors(responses, MixedParams(discrete=fit.params_.discrete))
    with pytest.raises(IRTError, match="method"):
        fit_standard_errors(fit, responses, method="xpd")
    with pytest.raises(IRTError, match="not been fitted"):
        fit_standard_errors(MixedCalibrator(), responses)
