"""The nominal model on one θ: the proof that an item family is one module. The family
(``irt.families.nominal``) was first written for the multidimensional fits; with the
families owning their coordinates, start values and scoring values, the one-θ
calibrator, its standard errors, the mixed (discrete + continuous) calibrator and the
parameter file take it with no module of their own. Checked against R mirt's
``mirt(Science, 1, itemtype = c(rep('graded', 3), 'nominal'))``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from irt.errors import ParamsError
from irt.mirt_polytomous_em import MirtPolytomousCalibrator
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_estep import polytomous_log_likelihood
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_scoring import polytomous_scores
from itempool.formats.polytomous_params import read_polytomous_params, write_polytomous_params
from tests.irt.test_mixed import _continuous_pool, _simulate
from tests.irt.test_polytomous_em import (
    _figure,
    _mean_relative,
    _science,
    central_differences,
    needs_polytomous,
)

SCIENCE_TYPES = ["graded"] * 3 + ["nominal"]


def _nominal_pool(rng: np.random.Generator) -> PolytomousParams:
    """Two nominal items (4 and 3 categories) beside graded and 2PL items."""
    types = ["nominal", "nominal", "graded", "graded", "2PL", "2PL"]
    a = rng.uniform(0.8, 1.8, len(types))
    d = [[0.8, 1.2, 0.2], [0.5, -0.3], [1.0, 0.0, -1.2], [0.6, -0.6], [0.3], [-0.4]]
    ak = [[0.6, 1.7, 3.0], [1.4, 2.0], [], [], [], []]
    return PolytomousParams.create(types, a, d, ak=ak, item_ids=[f"q{j}" for j in range(6)])


def _science_rho(params: PolytomousParams) -> np.ndarray:
    """Per item a, d1..dm and the nominal item's free ak (the reported coordinates)."""
    assert params.ak is not None
    parts: list[np.ndarray] = []
    for j, kind in enumerate(params.item_types):
        m = int(params.n_categories[j]) - 1
        parts += [params.a[j : j + 1], params.d[j, :m], params.ak[j, : kind.family.free_scores(m)]]
    return np.concatenate(parts)


def _science_params(rho: np.ndarray, like: PolytomousParams) -> PolytomousParams:
    a: list[float] = []
    d: list[list[float]] = []
    ak: list[list[float]] = []
    at = 0
    for j, kind in enumerate(like.item_types):
        m = int(like.n_categories[j]) - 1
        free = kind.family.free_scores(m)
        a.append(rho[at])
        d.append(rho[at + 1 : at + 1 + m].tolist())
        ak.append([*rho[at + 1 + m : at + 1 + m + free].tolist(), float(m)] if free else [])
        at += 1 + m + free
    return PolytomousParams.create(like.item_types, a, d, ak=ak, item_ids=like.item_ids)


@pytest.fixture(scope="module")
def science_fit() -> PolytomousCalibrator:
    return PolytomousCalibrator(SCIENCE_TYPES, tol=1e-6).fit(_science())


@needs_polytomous
def test_science_nominal_reproduces_mirt(science_fit: PolytomousCalibrator) -> None:
    """Coefficients in mirt's coef() order (items 1-3: a1, d1..d3; item 4: a1, ak0..ak3,
    d0..d3; then MEAN, COV) within mirt's own 1e-2 (mean relative), 18 parameters."""
    fit = science_fit
    p = fit.params_
    assert fit.converged_ and fit.n_parameters_ == 18 and p.ak is not None
    got = [v for j in range(3) for v in (p.a[j], *p.d[j])]
    got += [p.a[3], 0.0, *p.ak[3], 0.0, *p.d[3], 0.0, 1.0]
    expected = _figure("science_graded3_nominal1", "coefficients")
    assert _mean_relative(np.array(got), expected) < 0.01
    assert p.ak[3, 2] == 3.0  # mirt's fixed ak_m = m


@needs_polytomous
def test_one_theta_and_one_factor_fits_agree(science_fit: PolytomousCalibrator) -> None:
    """The same model through the multidimensional calibrator on one factor: the family
    is one object whatever the latent structure."""
    data = _science()
    mirt = MirtPolytomousCalibrator(np.ones((4, 1), bool), SCIENCE_TYPES, tol=1e-6).fit(data)
    one = science_fit.params_
    assert one.ak is not None
    assert mirt.loglik_ == pytest.approx(science_fit.loglik_, abs=1e-4)
    np.testing.assert_allclose(np.abs(mirt.params_.slopes[:, 0]), one.a, atol=2e-3)
    np.testing.assert_allclose(mirt.params_.ak[3], one.ak[3], atol=2e-3)
    np.testing.assert_allclose(mirt.params_.d[3], one.d[3], atol=2e-3)


@needs_polytomous
def test_science_fit_is_stationary_and_oakes_is_its_curvature(
    science_fit: PolytomousCalibrator,
) -> None:
    """At the fit the log-likelihood's gradient in (a, d, free ak) is zero, and the
    Oakes information equals its negative Hessian by second differences; ak's errors
    are reported under ``item.ak1`` labels."""
    data = _science()
    fit = science_fit
    assert fit.se_ is not None
    x0 = _science_rho(fit.params_)
    assert x0.size == fit.n_parameters_ == len(fit.se_.labels)
    assert "Benefit.ak1" in fit.se_.labels and "Benefit.ak2" in fit.se_.labels

    def loglik(x: np.ndarray) -> float:
        return polytomous_log_likelihood(data, _science_params(x, fit.params_))

    grad, hess = central_differences(loglik, x0)
    assert np.abs(grad).max() < 5e-3
    np.testing.assert_allclose(fit.se_.information, -hess, rtol=2e-3, atol=2e-2)
    se_ak = fit.params_.se_ak
    assert se_ak is not None
    assert np.all(np.isfinite(se_ak[3, :2])) and np.all(se_ak[3, :2] > 0)
    assert np.isnan(se_ak[3, 2]) and np.isnan(se_ak[:3]).all()  # fixed or not nominal


@needs_polytomous
def test_under_the_weakly_informative_priors_oakes_is_the_log_posteriors_curvature() -> None:
    """The default priors of a pool calibrated on few subjects add ak_l ~ N(l, 1) for a
    nominal item: the fit is a stationary point of the log posterior, the Oakes
    information its curvature, and the prior pulls the scoring values towards 1..m."""
    data = _science()
    priors = PolytomousPriors.weakly_informative([ItemType(t) for t in SCIENCE_TYPES])
    assert priors.ak_sd == 1.0 and priors.describe()["ak_l - l"]["sd"] == 1.0
    fit = PolytomousCalibrator(SCIENCE_TYPES, priors=priors, tol=1e-6).fit(data)
    assert fit.se_ is not None and fit.params_.ak is not None
    assert fit.logpost_ == pytest.approx(fit.loglik_ + priors.log_prior(fit.params_))
    x0 = _science_rho(fit.params_)

    def logpost(x: np.ndarray) -> float:
        params = _science_params(x, fit.params_)
        return polytomous_log_likelihood(data, params) + priors.log_prior(params)

    grad, hess = central_differences(logpost, x0)
    assert np.abs(grad).max() < 5e-3
    np.testing.assert_allclose(fit.se_.information, -hess, rtol=2e-3, atol=2e-2)
    without = replace(priors, ak_sd=None)
    loose = PolytomousCalibrator(SCIENCE_TYPES, priors=without, tol=1e-6).fit(data).params_.ak
    assert loose is not None
    # The prior's term is the squared distance from the gpcm's 1, 2: it shrinks.
    distance = np.sum((fit.params_.ak[3, :2] - [1.0, 2.0]) ** 2)
    assert distance < np.sum((loose[3, :2] - [1.0, 2.0]) ** 2)


def test_nominal_with_scoring_values_one_to_m_is_the_gpcm() -> None:
    rng = np.random.default_rng(3)
    a, d = rng.uniform(0.5, 2.0, 3), rng.normal(0.0, 1.0, (3, 3))
    nominal = PolytomousParams.create("nominal", a, d, ak=[[1.0, 2.0, 3.0]] * 3)
    gpcm = PolytomousParams.create("gpcm", a, d)
    theta = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(nominal.log_probs(theta), gpcm.log_probs(theta), atol=1e-12)
    np.testing.assert_allclose(nominal.information(theta), gpcm.information(theta), atol=1e-12)


def test_recovery_alone_and_beside_continuous_items() -> None:
    """Simulated nominal, graded, 2PL and continuous items: the one-θ calibrator and the
    mixed calibrator both recover the nominal items' free scoring values, and the mixed
    calibrator with the discrete items alone is the one-θ calibrator."""
    rng = np.random.default_rng(29)
    discrete = _nominal_pool(rng)
    true = MixedParams(discrete=discrete, continuous=_continuous_pool(3, 2, rng))
    responses, theta = _simulate(true, 4000, rng, missing=0.05)
    assert responses.discrete is not None and true.continuous is not None
    types = [t.value for t in discrete.item_types]
    alone = PolytomousCalibrator(types, tol=1e-6, standard_errors=None).fit(responses.discrete)
    both = MixedCalibrator(
        types, continuous_types=[t.value for t in true.continuous.item_types], tol=1e-6
    ).fit(responses)
    only = MixedCalibrator(types, tol=1e-6).fit(MixedResponses(responses.discrete, None))
    assert alone.converged_ and both.converged_
    got_alone, got_both = alone.params_, both.params_.discrete
    assert got_both is not None and got_alone.ak is not None and got_both.ak is not None
    assert discrete.ak is not None
    free = [(0, 0), (0, 1), (1, 0)]
    for j, k in free:
        assert got_alone.ak[j, k] == pytest.approx(discrete.ak[j, k], abs=0.25)
        assert got_both.ak[j, k] == pytest.approx(discrete.ak[j, k], abs=0.25)
    assert only.params_.discrete is not None and only.params_.discrete.ak is not None
    np.testing.assert_allclose(only.params_.discrete.ak, got_alone.ak, atol=1e-3)
    assert only.loglik_ == pytest.approx(alone.loglik_, abs=1e-3)
    # Scoring reaches the nominal items through the same family.
    eap = polytomous_scores(responses.discrete, got_alone).theta
    assert np.corrcoef(eap, theta)[0, 1] > 0.75


def test_parameter_file_round_trip_and_checks(tmp_path: Path) -> None:
    """ak columns are written only with a nominal item, read back exactly, and a
    nominal row without them, or with ak_m ≠ m, is refused naming its line."""
    rng = np.random.default_rng(5)
    params = _nominal_pool(rng)
    path = tmp_path / "params.csv"
    write_polytomous_params(params, path)
    header = path.read_text().splitlines()[0]
    assert header == "item_id,type,a,d1,d2,d3,c,ak1,ak2,ak3"
    back = read_polytomous_params(path)
    assert back.ak is not None and params.ak is not None
    np.testing.assert_array_equal(back.ak, params.ak)
    np.testing.assert_allclose(back.log_probs([0.4]), params.log_probs([0.4]))

    graded = PolytomousParams.create("graded", [1.0], [[0.5, -0.5]])
    write_polytomous_params(graded, path)
    assert "ak1" not in path.read_text()

    path.write_text("item_id,type,a,d1,d2,c\nq0,nominal,1.0,0.2,0.1,\n")
    with pytest.raises(ParamsError, match=r"line 2: .*need the columns ak1..ak2 after c"):
        read_polytomous_params(path)
    path.write_text("item_id,type,a,d1,d2,c,ak1,ak2\nq0,nominal,1.0,0.2,0.1,,0.5,1.5\n")
    with pytest.raises(ParamsError, match=r"line 2: .*mirt fixes the nominal scoring values"):
        read_polytomous_params(path)
    with pytest.raises(ParamsError, match="only gpcm/nominal have ak"):
        PolytomousParams.create("graded", [1.0], [[0.5, -0.5]], ak=[[1.0, 2.0]])
