"""EM calibration of polytomous and mixed pools: the likelihood against brute force,
R mirt's Science figures (graded, graded + gpcm, sequential), binary data against the
2PL calibrator and mirt, standard errors, parameter recovery, and bad input."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError, ResponseDataError
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_estep import polytomous_log_likelihood
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.polytomous_scoring import polytomous_scores
from irt.polytomous_se import polytomous_standard_errors
from irt.priors import ItemPriors
from itempool.formats.responses import read_responses
from tests.irt.test_polytomous import mixed_pool, simulate

POLYTOMOUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human" / "polytomous"
needs_polytomous = pytest.mark.skipif(
    not POLYTOMOUS.is_dir(), reason="../shared/data/human/polytomous is absent"
)
# R's qnorm(0.975): mirt's Wald intervals are estimate ± this × SE.
Z975 = 1.959963984540054


def _mean_relative(x: np.ndarray, y: np.ndarray) -> float:
    """testthat 3e / waldo: mean|x − y| / mean|y| over the elements not exactly equal
    (NaN positions must match and are dropped)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    assert np.array_equal(np.isnan(x), np.isnan(y))
    keep = ~np.isnan(y) & (x != y)
    return float(np.mean(np.abs(x[keep] - y[keep])) / np.mean(np.abs(y[keep])))


def _refs() -> dict[str, Any]:
    return {r["id"]: r for r in json.loads((POLYTOMOUS / "refs.json").read_text())}


def _figure(ref_id: str, what: str) -> np.ndarray:
    (figure,) = [f for f in _refs()[ref_id]["figures"] if f["what"].startswith(what)]
    return np.array([np.nan if v is None else v for v in figure["value"]], dtype=float)


def _science() -> PolytomousResponses:
    """Science (392 × 4, categories 1..4), recoded to 0..3 as mirt does internally."""
    path = POLYTOMOUS / "Science.csv"
    items = path.read_text().splitlines()[0].split(",")
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    return PolytomousResponses.from_array(raw - 1, item_ids=items)


def _coefficients(params: PolytomousParams) -> np.ndarray:
    """Per item a1, d1..dm (mirt's coef() order for graded, sequential and 2PL)."""
    return np.column_stack([params.a, params.d]).ravel()


def _mirt_params(types: list[str], vector: np.ndarray, items: tuple[str, ...]) -> PolytomousParams:
    block = vector.reshape(len(items), -1)
    return PolytomousParams.create(types, block[:, 0], block[:, 1:], item_ids=items)


# --- the likelihood -------------------------------------------------------------------


def test_log_likelihood_equals_brute_force() -> None:
    """Σ_n log Σ_q w_q Π_j P_j(y_nj | θ_q) subject by subject (no pattern collapsing),
    mixed items with missing answers and a repeated pattern, and against Gauss–Hermite
    integration over N(0, 1) on a fine grid."""
    rng = np.random.default_rng(10)
    params = mixed_pool(rng)
    resp, _ = simulate(params, 40, rng, missing=0.25)
    values = resp.values.copy()
    values[1] = values[0]
    resp = PolytomousResponses(resp.subject_ids, resp.item_ids, values, resp.n_categories)
    points = np.linspace(-6, 6, 61)
    weights = np.exp(-0.5 * points**2) / np.exp(-0.5 * points**2).sum()
    prob = params.probabilities(points)  # (Q, J, K)
    brute = 0.0
    for i in range(resp.n_subjects):
        like = weights.copy()
        for j in range(resp.n_items):
            if values[i, j] != MISSING:
                like = like * prob[:, j, values[i, j]]
        brute += np.log(like.sum())
    assert polytomous_log_likelihood(resp, params) == pytest.approx(brute, rel=1e-12)

    z, w = np.polynomial.hermite_e.hermegauss(80)
    log_p = params.log_probs(z)
    answered = values != MISSING
    gh = 0.0
    for i in range(resp.n_subjects):
        cols = np.flatnonzero(answered[i])
        gh += np.log(w @ np.exp(log_p[:, cols, values[i, cols]].sum(axis=1)) / np.sqrt(2 * np.pi))
    assert polytomous_log_likelihood(resp, params, n_quad=301, bound=8) == pytest.approx(
        gh, rel=1e-9
    )


# --- R mirt on Science -----------------------------------------------------------------


@needs_polytomous
def test_science_graded_reproduces_mirt() -> None:
    """mirt(Science, 1): coefficients within mirt's 1e-2 (mean relative), df 239, and our
    log-likelihood at least mirt's at its asserted values (default and SEM fits).
    Printed: the mean relative differences and the two log-likelihoods."""
    data = _science()
    fit = PolytomousCalibrator().fit(data)
    assert fit.converged_ and fit.df_ == 239 == 4**4 - 1 - fit.n_parameters_
    ours = _coefficients(fit.params_)
    default = _figure("science_graded_1f", "coefficients as.numeric")[:16]
    sem = _figure("science_graded_1f_SEM", "coef(modp1) with 95%")
    ours_ci = np.column_stack(
        [ours, ours - Z975 * _coefficients_se(fit), ours + Z975 * _coefficients_se(fit)]
    ).ravel()
    diffs = {
        "default": _mean_relative(ours, default),
        "SEM estimates": _mean_relative(ours, sem[:48:3]),
        "SEM estimates and CIs": _mean_relative(ours_ci, sem[:48]),
    }
    at_mirt = polytomous_log_likelihood(data, _mirt_params(["graded"] * 4, default, data.item_ids))
    at_sem = polytomous_log_likelihood(
        data, _mirt_params(["graded"] * 4, sem[:48:3], data.item_ids)
    )
    print(f"\nScience graded: {diffs}; loglik ours {fit.loglik_:.5f}, at mirt's default")
    print(f"  {at_mirt:.5f}, at mirt's SEM {at_sem:.5f}; {fit.n_iter_} cycles, {fit.seconds_:.3f}s")
    assert diffs["default"] < 1e-2 and diffs["SEM estimates"] < 1e-3
    # Wald intervals from our observed information against mirt's SEM-based ones.
    assert diffs["SEM estimates and CIs"] < 1e-2
    assert fit.loglik_ >= at_mirt and fit.loglik_ >= at_sem
    assert fit.loglik_ - at_mirt < 1e-3  # the same optimum, not a different one
    assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 32)
    assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + 16 * np.log(392))


def _coefficients_se(fit: PolytomousCalibrator) -> np.ndarray:
    assert fit.params_.se_a is not None and fit.params_.se_d is not None
    return np.column_stack([fit.params_.se_a, fit.params_.se_d]).ravel()


@needs_polytomous
def test_science_standard_errors_are_mirts_observed_information() -> None:
    """At mirt's estimates our Oakes standard errors equal mirt's Louis ones (the same
    observed information) within mirt's 1e-3; the cross-product ones are close."""
    data = _science()
    louis = _figure("science_graded_1f", "same model refit with SE=TRUE")[:32].reshape(16, 2)
    at = _mirt_params(["graded"] * 4, louis[:, 0], data.item_ids)
    oakes = polytomous_standard_errors(data, at)
    ours = np.column_stack([oakes.a, oakes.d]).ravel()
    print(f"\nOakes SEs at mirt's estimates vs Louis: {_mean_relative(ours, louis[:, 1]):.2e}")
    assert _mean_relative(ours, louis[:, 1]) < 1e-3
    assert oakes.labels[:4] == ("Comfort.a", "Comfort.d1", "Comfort.d2", "Comfort.d3")
    # mirt's condition numbers of the same matrix: 97.86 (Oakes), 98.26 (Louis).
    assert oakes.condition_number == pytest.approx(98.0, rel=0.02)
    xpd = polytomous_standard_errors(data, at, method="xpd")
    assert _mean_relative(np.column_stack([xpd.a, xpd.d]).ravel(), louis[:, 1]) < 0.1


@needs_polytomous
def test_science_graded_and_gpcm_reproduces_mirt() -> None:
    """Items 1–3 graded, item 4 gpcm (mirt's form): the 23 point estimates among the 69
    numbers (estimate, CI low, CI high per parameter, fixed ones with NA CIs) within
    1e-2, and the whole vector with our Wald intervals too."""
    data = _science()
    fit = PolytomousCalibrator(["graded"] * 3 + ["gpcm"]).fit(data)
    assert fit.converged_ and fit.n_parameters_ == 16
    vector = _figure("science_graded3_gpcm1_SEM", "coefficients with 95%")
    assert vector.size == 69
    est, se = _coefficients(fit.params_), _coefficients_se(fit)
    triples = np.column_stack([est, est - Z975 * se, est + Z975 * se])
    fixed = [[v, np.nan, np.nan] for v in (0, 1, 2, 3, 0)]  # ak0..ak3, d0 of the gpcm item
    ours = np.concatenate(
        [
            triples[:13].ravel(),
            np.ravel(fixed),
            triples[13:].ravel(),
            [0, np.nan, np.nan, 1, np.nan, np.nan],  # MEAN_1, COV_11
        ]
    )
    estimates = _mean_relative(ours[0::3], vector[0::3])
    whole = _mean_relative(ours, vector)
    free = np.r_[vector[0:39:3], vector[54:63:3]]
    at_mirt = polytomous_log_likelihood(
        data, _mirt_params(["graded"] * 3 + ["gpcm"], free, data.item_ids)
    )
    print(f"\nScience graded+gpcm: estimates {estimates:.2e}, with CIs {whole:.2e}; loglik")
    print(f"  ours {fit.loglik_:.5f}, at mirt's {at_mirt:.5f}")
    assert estimates < 1e-2 and whole < 1e-2
    assert at_mirt <= fit.loglik_ < at_mirt + 1e-3


@needs_polytomous
def test_science_sequential_reproduces_mirts_log_likelihood() -> None:
    data = _science()
    fit = PolytomousCalibrator("sequential", standard_errors=None).fit(data)
    reference = _figure("science_sequential_1f", "coefficients")[:16]
    diff = _mean_relative(_coefficients(fit.params_), reference)
    print(f"\nScience sequential: loglik {fit.loglik_:.4f} (mirt -1609.768), coef {diff:.2e}")
    assert fit.loglik_ == pytest.approx(-1609.768, rel=1e-4)
    assert fit.loglik_ == pytest.approx(-1609.768, abs=1e-3)
    assert diff < 1e-2 and fit.df_ == 239


@pytest.mark.parametrize(("name", "loglik"), [("LSAT7", -2658.805), ("SAT12_binary_NA", -9455.849)])
def test_binary_data_are_the_2pl(shared_data: Path, name: str, loglik: float) -> None:
    """A 0/1 matrix as the special case m = 1: mirt's 2PL log-likelihood (SAT12 with its
    omitted answers missing) and the 2PL calibrator's estimates (b = −d/a)."""
    binary = read_responses(shared_data / "human" / f"mirt_{name}.csv", id_column=False)
    data = PolytomousResponses.from_binary(binary)
    fit = PolytomousCalibrator(standard_errors=None, tol=1e-6).fit(data)
    assert set(fit.params_.item_types) == {ItemType.TWO_PL}
    assert fit.loglik_ == pytest.approx(loglik, abs=0.01)
    em = EMCalibrator("2pl", priors=ItemPriors.none(), tol=1e-6, standard_errors=False).fit(binary)
    np.testing.assert_allclose(fit.params_.a, em.params_.a, rtol=2e-3)
    np.testing.assert_allclose(-fit.params_.d[:, 0] / fit.params_.a, em.params_.b, atol=5e-3)


# --- standard errors and the optimum ----------------------------------------------------


def central_differences(
    f: Callable[[np.ndarray], float], x0: np.ndarray, h1: float = 1e-4, h2: float = 2e-3
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient (steps ``h1``) and the Hessian (steps ``h2``, four-point second
    differences) of ``f`` at ``x0``."""
    eye = np.eye(x0.size) * h1
    grad = np.array([(f(x0 + e) - f(x0 - e)) / (2 * h1) for e in eye])
    eye = np.eye(x0.size) * h2
    hess = np.empty((x0.size, x0.size))
    for i in range(x0.size):
        for k in range(i, x0.size):
            hess[i, k] = hess[k, i] = (
                f(x0 + eye[i] + eye[k])
                - f(x0 + eye[i] - eye[k])
                - f(x0 - eye[i] + eye[k])
                + f(x0 - eye[i] - eye[k])
            ) / (4 * h2 * h2)
    return grad, hess


def _coordinates(params: PolytomousParams) -> np.ndarray:
    """Per item a, d1..dm and logit c for 3PL items (the order of ``labels``)."""
    parts = []
    for j in range(params.n_items):
        parts += [params.a[j], *params.thresholds(j)]
        if params.item_types[j] is ItemType.THREE_PL:
            parts.append(np.log(params.c[j] / (1 - params.c[j])))
    return np.array(parts)


def _with_coordinates(params: PolytomousParams, x: np.ndarray) -> PolytomousParams:
    a, d, c, at = [], [], [], 0
    for j in range(params.n_items):
        m = int(params.max_scores[j])
        a.append(x[at])
        d.append(list(x[at + 1 : at + 1 + m]))
        at += 1 + m
        if params.item_types[j] is ItemType.THREE_PL:
            c.append(1 / (1 + np.exp(-x[at])))
            at += 1
        else:
            c.append(0.0)
    return PolytomousParams.create(params.item_types, a, d, c, item_ids=params.item_ids)


def test_the_fit_is_a_stationary_point_and_oakes_is_its_curvature() -> None:
    """With every prior on (log-normal slopes, normal thresholds, Beta c) the fit's log
    posterior has a zero gradient, and the Oakes information equals its negative
    Hessian taken by second differences of the log posterior itself."""
    rng = np.random.default_rng(11)
    truth = mixed_pool(rng)
    data, _ = simulate(truth, 400, rng, missing=0.1)
    priors = PolytomousPriors(
        a_meanlog=0.0, a_sdlog=0.5, d_mean=0.0, d_sd=3.0, c_alpha=3.0, c_beta=15.0
    )
    fit = PolytomousCalibrator(truth.item_types, priors=priors, tol=1e-7).fit(data)
    assert fit.converged_ and fit.se_ is not None
    assert fit.describe()["priors"] == priors.describe()
    assert fit.logpost_ == pytest.approx(fit.loglik_ + priors.log_prior(fit.params_))
    x0 = _coordinates(fit.params_)
    assert x0.size == fit.n_parameters_ == len(fit.se_.labels)

    def logpost(x: np.ndarray) -> float:
        params = _with_coordinates(fit.params_, x)
        return polytomous_log_likelihood(data, params) + priors.log_prior(params)

    grad, hess = central_differences(logpost, x0)
    assert np.abs(grad).max() < 1e-3
    np.testing.assert_allclose(fit.se_.information, -hess, rtol=2e-3, atol=2e-2)
    # Reported c's SE is the delta method from logit c.
    j = fit.params_.item_types.index(ItemType.THREE_PL)
    assert fit.params_.se_c is not None and np.isnan(fit.params_.se_c[0])
    k = fit.se_.labels.index(f"{fit.params_.item_ids[j]}.logit_c")
    cj = fit.params_.c[j]
    cov = np.linalg.inv(fit.se_.information)
    assert fit.params_.se_c[j] == pytest.approx(cj * (1 - cj) * np.sqrt(cov[k, k]))


def test_em_never_lowers_the_log_posterior() -> None:
    """Cycle by cycle from the same start (SQUAREM's jumps kept only when they gain)."""
    rng = np.random.default_rng(12)
    truth = mixed_pool(rng)
    data, _ = simulate(truth, 300, rng)
    priors = PolytomousPriors(a_mean=1.0, a_sd=1.0, d_mean=0.0, d_sd=2.0, c_alpha=2, c_beta=8)
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for cycles in range(1, 9):
            fit = PolytomousCalibrator(
                truth.item_types, priors=priors, max_iter=cycles, standard_errors=None
            ).fit(data)
            values.append(fit.logpost_)
    assert np.all(np.diff(values) >= -1e-9), values


# --- recovery ---------------------------------------------------------------------------


@pytest.mark.slow
def test_graded_recovery_2000_by_50() -> None:
    """2,000 subjects × 50 graded items with 4 categories (fixed seed); the fit time is
    printed, not asserted."""
    rng = np.random.default_rng(13)
    a = rng.lognormal(0.2, 0.3, 50)
    d = -np.sort(rng.normal(0.0, 1.2, (50, 3)), axis=1) + np.array([0.8, 0.0, -0.8])
    truth = PolytomousParams.create("graded", a, d)
    data, theta = simulate(truth, 2000, rng)
    t0 = time.perf_counter()
    fit = PolytomousCalibrator(standard_errors=None).fit(data)
    seconds = time.perf_counter() - t0
    r_a = np.corrcoef(fit.params_.a, a)[0, 1]
    r_d = np.corrcoef(fit.params_.d.ravel(), d.ravel())[0, 1]
    print(f"\n2,000 x 50 graded: fit {seconds:.2f}s ({fit.n_iter_} cycles), r(a) {r_a:.4f}, ")
    print(f"  r(d) {r_d:.4f}, max |d - d_true| {np.abs(fit.params_.d - d).max():.3f}")
    assert fit.converged_
    assert r_d >= 0.95 and r_a >= 0.90
    eap = polytomous_scores(data, fit.params_)
    assert np.corrcoef(eap.theta, theta)[0, 1] > 0.95


def test_mixed_pool_recovery_and_scores() -> None:
    """2PL, graded and gpcm items on one θ with 10% of answers missing: parameters come
    back, and EAP correlates with the true θ as its posterior SDs say it should
    (corr(EAP, θ)² = Var(EAP) = 1 − E[posterior variance] for a correct model)."""
    rng = np.random.default_rng(14)
    types = ["2PL"] * 12 + ["graded"] * 10 + ["gpcm"] * 8
    a = rng.uniform(0.8, 2.2, 30)
    d: list[list[float]] = []
    for kind in types:
        if kind == "2PL":
            d.append([rng.normal(0.0, 1.0)])
        elif kind == "graded":
            d.append(list(-np.sort(rng.normal(0.0, 1.0, 3)) + [1.0, 0.0, -1.0]))
        else:  # mirt's gpcm: d_k = −a Σ_{l ≤ k} b_l
            d.append(list(np.cumsum(-a[len(d)] * np.sort(rng.normal(0.0, 1.0, 2)))))
    truth = PolytomousParams.create(types, a, d)
    data, theta = simulate(truth, 1500, rng, missing=0.1)
    fit = PolytomousCalibrator(
        {item: kind for item, kind in zip(truth.item_ids, types, strict=True) if kind == "gpcm"},
        standard_errors="xpd",
    ).fit(data)
    assert fit.converged_ and fit.params_.item_types == truth.item_types
    assert fit.describe()["item_types"] == {"2PL": 12, "gpcm": 8, "graded": 10}
    free = ~np.isnan(truth.d)
    r_a = np.corrcoef(fit.params_.a, a)[0, 1]
    r_d = np.corrcoef(fit.params_.d[free], truth.d[free])[0, 1]
    assert r_a > 0.9 and r_d > 0.97
    # Errors the size the standard errors say (a z-score check over all parameters).
    assert fit.params_.se_a is not None and fit.params_.se_d is not None
    z = np.r_[
        (fit.params_.a - a) / fit.params_.se_a, ((fit.params_.d - truth.d) / fit.params_.se_d)[free]
    ]
    assert 0.7 < np.sqrt(np.mean(z**2)) < 1.3
    eap = polytomous_scores(data, fit.params_)
    r = np.corrcoef(eap.theta, theta)[0, 1]
    expected = np.sqrt(1 - np.mean(eap.sd**2))
    print(f"\nmixed pool: r(a) {r_a:.3f}, r(d) {r_d:.3f}, corr(EAP, θ) {r:.4f},")
    print(f"  expected {expected:.4f}")
    assert r == pytest.approx(expected, abs=0.015)


def test_identical_patterns_collapse_and_start_values_are_used() -> None:
    """Each subject counted once per copy: doubling the data doubles the log-likelihood
    at the same optimum (no 3PL item here, whose default prior would weigh half as
    much against twice the data); a fit started at the optimum stays there."""
    rng = np.random.default_rng(15)
    truth = mixed_pool(rng).subset([0, 2, 3, 4, 5, 6, 7])
    data, _ = simulate(truth, 250, rng)
    twice = PolytomousResponses(
        tuple(f"{s}{k}" for k in "ab" for s in data.subject_ids),
        data.item_ids,
        np.vstack([data.values, data.values]),
        data.n_categories,
    )
    settings: dict[str, Any] = {"item_types": truth.item_types, "tol": 1e-6}
    one = PolytomousCalibrator(**settings, standard_errors=None).fit(data)
    two = PolytomousCalibrator(**settings, standard_errors=None).fit(twice)
    assert two.loglik_ == pytest.approx(2 * one.loglik_, rel=1e-9)
    np.testing.assert_allclose(two.params_.a, one.params_.a, atol=1e-4)
    warm = PolytomousCalibrator(**settings, standard_errors=None).fit(data, start=one.params_)
    assert warm.n_iter_ <= 2 and warm.loglik_ == pytest.approx(one.loglik_, abs=1e-8)


# --- behaviour and bad input ------------------------------------------------------------


def test_non_convergence_warns() -> None:
    rng = np.random.default_rng(16)
    truth = mixed_pool(rng)
    data, _ = simulate(truth, 200, rng)
    with pytest.warns(ConvergenceWarning, match="cap of 2 cycles"):
        fit = PolytomousCalibrator(truth.item_types, max_iter=2, standard_errors=None).fit(data)
    assert not fit.converged_ and fit.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert PolytomousCalibrator(truth.item_types, standard_errors=None).fit(data).se_ is None


def test_bad_input_is_refused_with_one_clear_line() -> None:
    rng = np.random.default_rng(17)
    truth = mixed_pool(rng)
    data, _ = simulate(truth, 100, rng)
    values = data.values.copy()
    values[:, 3] = np.where(values[:, 3] >= 0, 1, MISSING)
    one_score = PolytomousResponses(data.subject_ids, data.item_ids, values, data.n_categories)
    with pytest.raises(ResponseDataError, match=r"item 'i0003' has a single observed score \(1\)"):
        PolytomousCalibrator(truth.item_types).fit(one_score)
    values = data.values.copy()
    values[values[:, 2] == 1, 2] = 2
    gap = PolytomousResponses(data.subject_ids, data.item_ids, values, data.n_categories)
    with pytest.raises(
        ResponseDataError, match=r"item 'i0002' .* has no answer scoring 1; .*collapsed"
    ):
        PolytomousCalibrator(truth.item_types).fit(gap)
    values = data.values.copy()
    values[:, 5] = MISSING
    with pytest.raises(ResponseDataError, match="item 'i0005' has no answers"):
        PolytomousCalibrator().fit(
            PolytomousResponses(data.subject_ids, data.item_ids, values, data.n_categories)
        )
    with pytest.raises(IRTError, match="item_types has 3 entries for 8 items"):
        PolytomousCalibrator(["graded"] * 3).fit(data)
    with pytest.raises(IRTError, match="unknown item type 'ideal' for item 'i0000'"):
        PolytomousCalibrator("ideal").fit(data)
    with pytest.raises(
        IRTError, match="item 'i0002' has 4 score categories; a 2PL item needs exactly 2"
    ):
        PolytomousCalibrator("2PL").fit(data)
    with pytest.raises(IRTError, match="item_types names item 'zz'"):
        PolytomousCalibrator({"zz": "gpcm"}).fit(data)
    with pytest.raises(IRTError, match="tol must be positive"):
        PolytomousCalibrator(tol=0)
    with pytest.raises(IRTError, match="standard_errors must be one of oakes, xpd or None"):
        PolytomousCalibrator(standard_errors="sem")
    with pytest.raises(IRTError, match="quadrature grid needs at least 5 points"):
        PolytomousCalibrator(n_quad=3)
    with pytest.raises(IRTError, match="a_meanlog and a_sdlog"):
        PolytomousPriors(a_meanlog=0.0)
    with pytest.raises(IRTError, match="not both"):
        PolytomousPriors(a_meanlog=0.0, a_sdlog=0.5, a_mean=1.0, a_sd=1.0)
    with pytest.raises(IRTError, match="c_alpha must be >= 1"):
        PolytomousPriors(c_alpha=0.5, c_beta=2.0)
    with pytest.raises(IRTError, match="starting values must cover the same items"):
        PolytomousCalibrator(truth.item_types).fit(
            data, start=truth.subset([1, 0, 2, 3, 4, 5, 6, 7])
        )
    with pytest.raises(IRTError, match="starting values for item 'i0004' are gpcm"):
        PolytomousCalibrator("graded").fit(
            data.subset(items=[2, 3, 4]), start=truth.subset([2, 3, 4])
        )


def test_default_priors_only_guard_the_3pl() -> None:
    assert PolytomousPriors.default_for([ItemType.GRADED, ItemType.TWO_PL]).describe() == {}
    assert PolytomousPriors.default_for([ItemType.THREE_PL]).describe() == {
        "c": {"dist": "beta", "alpha": 3.0, "beta": 15.0}
    }


def test_weakly_informative_priors_fit_scores_that_few_subjects_left_unused() -> None:
    # 25 subjects (a pool calibrated on language models): an item scored only 0 and 3
    # (1 and 2 unused) and one everybody got full credit on.
    rng = np.random.default_rng(8)
    params = PolytomousParams.create(
        ["graded"] * 6, rng.uniform(0.8, 1.6, 6), [[1.5, 0.5, -0.5]] * 6
    )
    data, _ = simulate(params, 25, rng)
    values = data.values.copy()
    values[:, 0] = np.where(values[:, 0] >= 2, 3, 0)
    values[:, 1] = 3
    sparse = PolytomousResponses(data.subject_ids, data.item_ids, values, data.n_categories)
    with pytest.raises(ResponseDataError, match="has no answer scoring 1"):
        PolytomousCalibrator(standard_errors=None).fit(sparse)
    priors = PolytomousPriors.weakly_informative(params.item_types)
    assert priors.identifying and not PolytomousPriors.default_for(params.item_types).identifying
    fit = PolytomousCalibrator(priors=priors, standard_errors=None).fit(sparse)
    assert fit.converged_
    d = fit.params_.d
    assert np.all(np.isfinite(d)) and np.all(np.abs(d) < 15)
    # The unused scores get next to no probability; full credit is the likely score.
    prob = fit.params_.probabilities([0.0])[0]
    assert prob[0, 1] + prob[0, 2] < 1e-3
    assert prob[1, 3] > 0.9
    assert priors.describe()["d"] == {"dist": "normal", "mean": 0.0, "sd": 3.0}
