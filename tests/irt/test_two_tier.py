"""The two-tier 2PL/3PL (Cai 2010): the reduced E-step against the full product grid,
R mirt's two-tier test figures, parameter recovery, the bifactor special case, EM's
monotonicity with priors, stationarity, and bad input."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from irt.bifactor import BifactorCalibrator, BifactorParams, bifactor_log_likelihood
from irt.errors import ConvergenceWarning, IRTError
from irt.mirt_estep import Patterns, mirt_log_likelihood, product_grid
from irt.mirt_estep import e_step as full_e_step
from irt.mirt_model import MirtParams, Structure
from irt.mirt_mstep import MirtPriors
from irt.responses import MISSING, ResponseMatrix
from irt.two_tier import NO_SPECIFIC, TwoTierCalibrator, two_tier_log_likelihood
from irt.two_tier_estep import TwoTierLayout, e_step, two_tier_grid
from itempool.formats.responses import read_responses

POLYTOMOUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human" / "polytomous"
needs_polytomous = pytest.mark.skipif(
    not POLYTOMOUS.is_dir(), reason="../shared/data/human/polytomous is absent"
)


def _mean_relative(x: np.ndarray, y: np.ndarray) -> float:
    """testthat 3e / waldo: mean|x − y| / mean|y| over the elements not exactly equal."""
    keep = x != y
    return float(np.mean(np.abs(x[keep] - y[keep])) / np.mean(np.abs(y[keep])))


def _params(
    general: np.ndarray,
    specific: np.ndarray,
    rng: np.random.Generator,
    rho: float = 0.0,
    guessing: bool = False,
) -> MirtParams:
    """A two-tier model: general slopes 0.5–2.2, specific slopes 0.3–1.4, d ~ N(0, 1),
    every general correlation ``rho``."""
    layout = TwoTierLayout.of(general, specific)
    pattern = layout.full_pattern()
    n, k = pattern.shape
    g = layout.n_general
    slopes = np.zeros((n, k))
    slopes[:, :g] = rng.uniform(0.5, 2.2, (n, g))
    slopes[:, g:] = rng.uniform(0.3, 1.4, (n, k - g))
    corr = np.eye(k)
    corr[:g, :g] = np.where(np.eye(g, dtype=bool), 1.0, rho)
    return MirtParams(
        item_ids=tuple(f"i{j}" for j in range(n)),
        slopes=np.where(pattern, slopes, 0.0),
        d=np.asarray(rng.normal(0.0, 1.0, n)),
        factors=(*(f"G{i + 1}" for i in range(g)), *(f"S{s + 1}" for s in range(k - g))),
        correlation=corr,
        pattern=pattern,
        structure=Structure.CONFIRMATORY,
        c=np.asarray(rng.uniform(0.05, 0.25, n)) if guessing else None,
    )


def _simulate(
    params: MirtParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> ResponseMatrix:
    theta = rng.multivariate_normal(np.zeros(params.n_factors), params.correlation, n)
    values = (rng.random((n, params.n_items)) < params.probability(theta)).astype(np.int8)
    values[rng.random(values.shape) < missing] = MISSING
    return ResponseMatrix(tuple(f"s{i}" for i in range(n)), params.item_ids, values)


def _small_layout() -> tuple[np.ndarray, np.ndarray]:
    """8 items, G = 2 (item 3 on both), 2 specific factors, items 3 and 7 on none."""
    general = np.zeros((8, 2), dtype=bool)
    general[:4, 0] = True
    general[3:, 1] = True
    specific = np.array([0, 0, 0, NO_SPECIFIC, 1, 1, 1, NO_SPECIFIC])
    return general, specific


# --- the E-step ------------------------------------------------------------------------


@pytest.mark.parametrize(("guessing", "missing"), [(False, 0.0), (True, 0.0), (True, 0.15)])
def test_reduced_e_step_equals_the_full_product_grid(guessing: bool, missing: float) -> None:
    """G = 2 correlated, 2 specific factors, 8 items on 7 points: the log-likelihood
    equals irt.mirt_estep's on the 7^4 product grid, and every item's expected counts
    on its local grid and the general mass are the full grid's, summed over the other
    dimensions."""
    rng = np.random.default_rng(0)
    general, specific = _small_layout()
    params = _params(general, specific, rng, rho=0.4, guessing=guessing)
    data = _simulate(params, 300, rng, missing)
    full = mirt_log_likelihood(data, params, n_quad=7)
    assert two_tier_log_likelihood(data, params, 2, n_quad=7) == pytest.approx(full, abs=1e-8)

    layout = TwoTierLayout.from_params(params, 2)
    grid = two_tier_grid(layout, 7)
    reduced = e_step(Patterns.of(data), params, layout, grid)
    brute = full_e_step(Patterns.of(data), params, product_grid(4, 7))
    assert reduced.loglik == pytest.approx(full, abs=1e-8)
    # Full-grid axes (G1, G2, S1, S2); the local grid is (t, G1, G2), t slowest.
    n_full, r_full = brute.n.reshape(8, 7, 7, 7, 7), brute.r.reshape(8, 7, 7, 7, 7)
    for j in range(8):
        s = int(specific[j])
        if s == NO_SPECIFIC:
            want_n = n_full[j].sum(axis=(2, 3))
            want_r = r_full[j].sum(axis=(2, 3))
            got_n = reduced.local.n[j].reshape(7, 7, 7).sum(axis=0)
            got_r = reduced.local.r[j].reshape(7, 7, 7).sum(axis=0)
        else:
            other = 3 - s  # the other specific factor's axis
            want_n = np.moveaxis(n_full[j].sum(axis=other), 2, 0)
            want_r = np.moveaxis(r_full[j].sum(axis=other), 2, 0)
            got_n = reduced.local.n[j].reshape(7, 7, 7)
            got_r = reduced.local.r[j].reshape(7, 7, 7)
        np.testing.assert_allclose(got_n, want_n, atol=1e-10)
        np.testing.assert_allclose(got_r, want_r, atol=1e-10)
    mass = brute.mass.reshape(7, 7, 7, 7).sum(axis=(2, 3)).ravel()
    np.testing.assert_allclose(reduced.general_mass, mass, atol=1e-10)


def test_long_blocks_do_not_underflow() -> None:
    """3,000 items in two blocks: a subject's likelihood is far below the smallest
    double (e^−745), yet the log-likelihood is finite and the full grid's."""
    rng = np.random.default_rng(1)
    general = np.ones((3000, 1), dtype=bool)
    specific = np.repeat([0, 1], 1500)
    params = _params(general, specific, rng)
    data = _simulate(params, 20, rng, missing=0.1)
    total = two_tier_log_likelihood(data, params, 1, n_quad=9)
    assert np.isfinite(total) and total / 20 < -745
    assert total == pytest.approx(mirt_log_likelihood(data, params, n_quad=9), rel=1e-12)


# --- R mirt ----------------------------------------------------------------------------


def _bfactor2_reference() -> tuple[np.ndarray, int]:
    refs = {r["id"]: r for r in json.loads((POLYTOMOUS / "refs.json").read_text())}
    figures: list[dict[str, Any]] = refs["bfactor2_two_tier"]["figures"]
    (coefs,) = [f for f in figures if f["tolerance"] == 0.01]
    (df,) = [f for f in figures if f["tolerance"] == "exact"]
    return np.asarray(coefs["value"], dtype=float), int(df["value"])


def _packed(params: MirtParams, specific: np.ndarray) -> np.ndarray:
    """mirt's layout: per item (general slope, specific slope, d), then COV(G1, G2)."""
    items = np.arange(params.n_items)
    g = np.where(items < 8, params.slopes[:, 0], params.slopes[:, 1])
    s = params.slopes[items, 2 + specific]
    return np.append(np.column_stack([g, s, params.d]).ravel(), params.correlation[0, 1])


@needs_polytomous
def test_bfactor2_two_tier_matches_r_mirt() -> None:
    """mirt's test-03-bfactor.R: bfactor(dataset, specific = c(rep(1,5), rep(2,6),
    rep(3,5)), 'G1 = 1-8, G2 = 9-16, COV = G1*G2', quadpts = 11, TOL = 1e-2). mirt's
    coefficients are where its EM stops at TOL = 1e-2, well short of where EM goes on
    (towards a Heywood case in S3), so plain EM from mirt's start values with the same
    stopping rule is compared, within mirt's 1% (mean relative); its log-likelihood is
    above that at mirt's values."""
    reference, df = _bfactor2_reference()
    data = read_responses(POLYTOMOUS / "testdata_bfactor2.csv", id_column=False)
    general = np.zeros((16, 2), dtype=bool)
    general[:8, 0] = general[8:, 1] = True
    specific = np.repeat([0, 1, 2], [5, 6, 5])
    fit = TwoTierCalibrator(general, specific, n_quad=11, tol=1e-2, accelerate=False).fit(data)
    assert fit.converged_
    assert 2**16 - 1 - fit.n_parameters_ == df == 65486
    ours = _packed(fit.params_, specific)
    assert _mean_relative(ours, reference) < 1e-2

    table = reference[:48].reshape(16, 3)
    slopes = np.zeros((16, 5))
    slopes[:8, 0], slopes[8:, 1] = table[:8, 0], table[8:, 0]
    slopes[np.arange(16), 2 + specific] = table[:, 1]
    corr = np.eye(5)
    corr[0, 1] = corr[1, 0] = reference[48]
    theirs = replace(fit.params_, slopes=slopes, d=table[:, 2], correlation=corr)
    assert np.array_equal(_packed(theirs, specific), reference)
    at_mirt = two_tier_log_likelihood(data, theirs, 2, n_quad=11)
    assert fit.loglik_ >= at_mirt
    assert fit.loglik_ == pytest.approx(two_tier_log_likelihood(data, fit.params_, 2, 11))
    assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 2 * 49)
    assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + 49 * np.log(2000))


# --- recovery and the bifactor case ----------------------------------------------------


def test_two_tier_recovery() -> None:
    """3,000 subjects, 24 items, two general factors correlated 0.5 (items 10–13 on
    both), three specific factors of 8 items, 3% missing."""
    rng = np.random.default_rng(3)
    general = np.zeros((24, 2), dtype=bool)
    general[:12, 0] = general[12:, 1] = True
    general[[10, 11, 12, 13], [1, 1, 0, 0]] = True
    specific = np.repeat([0, 1, 2], 8)
    truth = _params(general, specific, rng, rho=0.5)
    data = _simulate(truth, 3000, rng, missing=0.03)
    fit = TwoTierCalibrator(general, specific, n_quad=11).fit(data)
    est = fit.params_
    assert fit.converged_
    assert fit.n_parameters_ == 28 + 24 + 24 + 1
    assert abs(est.correlation[0, 1] - 0.5) < 0.08
    np.testing.assert_array_equal(est.correlation[2:, 2:], np.eye(3))
    np.testing.assert_array_equal(est.correlation[:2, 2:], 0.0)
    free = truth.pattern[:, :2]
    assert np.corrcoef(est.slopes[:, :2][free], truth.slopes[:, :2][free])[0, 1] > 0.9
    loaded = truth.pattern[:, 2:]
    assert np.corrcoef(est.slopes[:, 2:][loaded], truth.slopes[:, 2:][loaded])[0, 1] > 0.7
    assert np.corrcoef(est.d, truth.d)[0, 1] > 0.95
    assert np.all(est.slopes[~truth.pattern] == 0.0)
    assert fit.loglik_ >= two_tier_log_likelihood(data, truth, 2, n_quad=11)


def test_one_general_factor_is_the_bifactor_model() -> None:
    """G = 1: the same likelihood as irt.bifactor's on its 31-point grid, and the same
    optimum as BifactorCalibrator (two blocks of 5 and two general-only items)."""
    rng = np.random.default_rng(4)
    codes = np.repeat([0, 1, NO_SPECIFIC], [5, 5, 2])
    general = np.ones((12, 1), dtype=bool)
    data = _simulate(_params(general, codes, rng), 800, rng, missing=0.05)
    bifactor = BifactorCalibrator(float32=False, standard_errors=False, tol=1e-5)
    bifactor.fit(data, codes, groups=("S1", "S2"))
    as_mirt = bifactor.params_.to_mirt()
    assert two_tier_log_likelihood(data, as_mirt, 1) == pytest.approx(
        bifactor_log_likelihood(data, bifactor.params_), abs=1e-8
    )
    fit = TwoTierCalibrator(general, codes, tol=1e-5).fit(data)
    assert fit.converged_ and fit.n_parameters_ == bifactor.n_parameters_ == 12 * 2 + 10
    assert fit.loglik_ == pytest.approx(bifactor.loglik_, abs=1e-4)
    np.testing.assert_allclose(fit.params_.slopes, as_mirt.slopes, atol=2e-3)
    np.testing.assert_allclose(fit.params_.d, as_mirt.d, atol=2e-3)
    ours = BifactorParams(
        data.item_ids,
        fit.params_.slopes[:, 0],
        fit.params_.slopes[np.arange(12), 1 + np.maximum(codes, 0)] * (codes >= 0),
        fit.params_.d,
        codes,
        ("S1", "S2"),
    )
    assert bifactor_log_likelihood(data, ours) == pytest.approx(fit.loglik_, abs=1e-8)


# --- EM, priors and stationarity -------------------------------------------------------


def test_3pl_with_priors_never_lowers_the_log_posterior() -> None:
    """Plain EM cycles of the two-tier 3PL with priors and a free correlation: the log
    posterior after k cycles never falls with k; the accelerated fit converges to a
    finite point at least as good."""
    rng = np.random.default_rng(5)
    general, specific = _small_layout()
    truth = _params(general, specific, rng, rho=0.3, guessing=True)
    data = _simulate(truth, 500, rng, missing=0.05)
    priors = MirtPriors()
    path = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k in range(1, 7):
            cal = TwoTierCalibrator(
                general,
                specific,
                guessing=True,
                priors=priors,
                n_quad=9,
                max_iter=k,
                accelerate=False,
            )
            path.append(cal.fit(data).logpost_)
    assert np.all(np.diff(path) >= -1e-8)
    assert path[-1] > path[0] + 1.0
    fit = TwoTierCalibrator(general, specific, guessing=True, priors=priors, n_quad=9).fit(data)
    est = fit.params_
    assert fit.converged_ and est.c is not None
    assert np.all(np.isfinite(est.slopes)) and np.all((est.c > 0) & (est.c < 0.5))
    assert fit.n_parameters_ == int(truth.pattern.sum()) + 8 * 2 + 1
    assert fit.logpost_ == pytest.approx(fit.loglik_ + priors.log_density(est))
    assert fit.logpost_ >= path[-1]


def test_the_fit_is_a_stationary_point() -> None:
    """At a tight 2PL fit the numerical gradient of the reduced log-likelihood vanishes
    in every free slope, d and the correlation: the local-grid M-step, its mapping back
    and the correlation update maximise the likelihood. Two general factors of 8 items
    each, crossed by two specific factors of 6 (3 from each), 4 items on none."""
    rng = np.random.default_rng(6)
    general = np.zeros((16, 2), dtype=bool)
    general[:8, 0] = general[8:, 1] = True
    specific = np.tile([0, 0, 0, 1, 1, 1, NO_SPECIFIC, NO_SPECIFIC], 2)
    truth = _params(general, specific, rng, rho=0.4)
    data = _simulate(truth, 1000, rng)
    fit = TwoTierCalibrator(general, specific, n_quad=11, tol=1e-6).fit(data)
    assert fit.converged_
    est = fit.params_

    def loglik(p: MirtParams) -> float:
        return two_tier_log_likelihood(data, p, 2, n_quad=11)

    def moved(name: str, index: tuple[int, ...], h: float) -> MirtParams:
        value = getattr(est, name).copy()
        value[index] += h
        if name == "correlation":
            value[index[::-1]] += h
        return replace(est, **{name: value})

    h = 1e-5
    coordinates: list[tuple[str, tuple[int, ...]]] = [
        ("slopes", (int(j), int(k))) for j, k in np.argwhere(est.pattern)
    ]
    coordinates += [("d", (j,)) for j in range(16)] + [("correlation", (0, 1))]
    grads = [
        (loglik(moved(name, index, h)) - loglik(moved(name, index, -h))) / (2 * h)
        for name, index in coordinates
    ]
    assert len(grads) == fit.n_parameters_ == 16 + 12 + 16 + 1
    assert np.max(np.abs(grads)) < 1e-3


# --- bad input -------------------------------------------------------------------------


def test_bad_input_is_refused() -> None:
    general, specific = _small_layout()
    cases: list[tuple[Any, Any, dict[str, Any], str | None]] = [
        (general[:, 0], specific, {}, "items × general-factors matrix"),
        (np.ones((8, 4), dtype=bool), specific, {}, "1 to 3 general factors"),
        (general * 2, specific, {}, "booleans"),
        (general, specific[:7], {}, "one specific-factor code per item"),
        (general, specific + 0.5, {}, "must be integers"),
        (
            general,
            np.where(specific == 1, 2, specific),
            {"specific_names": ["a", "b"]},
            r"lie in -1\.\.1",
        ),
        (general, np.array([0, 0, 0, -1, 1, -1, -1, -1]), {}, "specific factor 2 has fewer"),
        (general, np.array([0, 0, 0, -2, 1, 1, 1, -1]), {}, r"lie in -1\.\.1"),
        (np.eye(8, 2, dtype=bool) | general, specific, {}, None),
        (np.c_[general[:, :1], np.eye(8, 1, dtype=bool)], specific, {}, "general factor 2"),
        (general, specific, {"specific_names": ["a", "b", "c"]}, "specific factor 3 has fewer"),
        (general, specific, {"general_names": ["G1"]}, "2 general factors but 1"),
        (general, specific, {"general_names": ["x", "S1"]}, "factor names repeat"),
        (general, specific, {"tol": 0.0}, "tol must be positive"),
        (general, specific, {"max_iter": 0}, "at least 1"),
        (general, specific, {"n_quad": 2}, "at least 3 points"),
        (general, specific, {"n_quad": 80}, "use fewer points"),
    ]
    for gen, spec, kwargs, message in cases:
        if message is None:
            TwoTierCalibrator(gen, spec, **kwargs)  # overlapping general loadings are fine
            continue
        with pytest.raises(IRTError, match=message):
            TwoTierCalibrator(gen, spec, **kwargs)
    lonely = general.copy()
    lonely[3] = False
    with pytest.raises(IRTError, match="item 4 loads on no factor"):
        TwoTierCalibrator(lonely, specific)

    rng = np.random.default_rng(7)
    params = _params(general, specific, rng, rho=0.3)
    data = _simulate(params, 50, rng)
    with pytest.raises(IRTError, match="layout has 8 items, the responses 7"):
        TwoTierCalibrator(general, specific).fit(
            ResponseMatrix(data.subject_ids, data.item_ids[:7], data.values[:, :7])
        )
    twice = params.pattern.copy()
    twice[0, 3] = True
    with pytest.raises(IRTError, match="more than one specific factor"):
        two_tier_log_likelihood(data, replace(params, pattern=twice), 2)
    tangled = params.correlation.copy()
    tangled[0, 2] = tangled[2, 0] = 0.2
    with pytest.raises(IRTError, match="specific factors must be uncorrelated"):
        two_tier_log_likelihood(data, replace(params, correlation=tangled), 2)
    with pytest.raises(IRTError, match="1 to 3 general factors"):
        two_tier_log_likelihood(data, params, 0)
    with pytest.raises(IRTError, match="same items in order"):
        two_tier_log_likelihood(data, replace(params, item_ids=params.item_ids[::-1]), 2)
