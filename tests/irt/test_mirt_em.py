"""The multidimensional 2PL/3PL by EM: the E-step against brute force, R mirt's LSAT7
and SAT12 figures, parameter recovery (confirmatory, exploratory with rotation, 3PL),
standard errors, scores, and bad input."""

from __future__ import annotations

import csv
import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError
from irt.exploratory.rotation import rotate, standardized_loadings
from irt.mirt_em import (
    MirtCalibrator,
    MirtPriors,
    mirt_log_likelihood,
    mirt_scores,
)
from irt.mirt_estep import Patterns, e_step, item_log_probs, log_weights, posterior_chunks
from irt.mirt_estep import product_grid as grid_of
from irt.mirt_model import MirtParams, Structure
from irt.mirt_mstep import correlation_step, m_step
from irt.mirt_se import item_standard_errors
from irt.priors import ItemPriors
from irt.responses import MISSING, ResponseMatrix
from itempool.formats.responses import read_responses

POLYTOMOUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human" / "polytomous"
needs_polytomous = pytest.mark.skipif(
    not POLYTOMOUS.is_dir(), reason="../shared/data/human/polytomous is absent"
)


def _params(
    pattern: np.ndarray,
    rng: np.random.Generator,
    correlation: np.ndarray | None = None,
    guessing: bool = False,
    structure: Structure = Structure.CONFIRMATORY,
) -> MirtParams:
    n, k = pattern.shape
    return MirtParams(
        item_ids=tuple(f"i{j}" for j in range(n)),
        slopes=np.where(pattern, rng.uniform(0.7, 2.0, (n, k)), 0.0),
        d=np.asarray(rng.normal(0.0, 1.0, n)),
        factors=tuple(f"F{i + 1}" for i in range(k)),
        correlation=np.eye(k) if correlation is None else correlation,
        pattern=pattern,
        structure=structure,
        c=np.asarray(rng.uniform(0.05, 0.25, n)) if guessing else None,
    )


def _simulate(
    params: MirtParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> tuple[ResponseMatrix, np.ndarray]:
    theta = rng.multivariate_normal(np.zeros(params.n_factors), params.correlation, n)
    values = (rng.random((n, params.n_items)) < params.probability(theta)).astype(np.int8)
    values[rng.random(values.shape) < missing] = MISSING
    return ResponseMatrix(tuple(f"s{i}" for i in range(n)), params.item_ids, values), theta


def _simple_pattern(n_items: int, n_factors: int) -> np.ndarray:
    pattern = np.zeros((n_items, n_factors), dtype=bool)
    pattern[np.arange(n_items), np.arange(n_items) * n_factors // n_items] = True
    return pattern


def _mean_relative(x: np.ndarray, y: np.ndarray) -> float:
    """testthat 3e / waldo: mean|x − y| / mean|y| over the elements not exactly equal."""
    keep = x != y
    return float(np.mean(np.abs(x[keep] - y[keep])) / np.mean(np.abs(y[keep])))


def _refs() -> dict[str, Any]:
    return {r["id"]: r for r in json.loads((POLYTOMOUS / "refs.json").read_text())}


def _lsat7() -> ResponseMatrix:
    return read_responses(POLYTOMOUS / "LSAT7_expanded.csv", id_column=False)


# --- the E-step --------------------------------------------------------------------------


def test_e_step_equals_brute_force_with_correlated_factors() -> None:
    """Two correlated factors, a 3PL item and missing answers: counts, posterior mass
    and log-likelihood equal a subject-by-subject, node-by-node sum, and the grid's
    log-likelihood equals Gauss–Hermite integration over N(0, R) (θ = Cz)."""
    rng = np.random.default_rng(0)
    pattern = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1]], dtype=bool)
    corr = np.array([[1.0, 0.6], [0.6, 1.0]])
    params = replace(_params(pattern, rng, corr), c=np.array([0.0, 0.2, 0.0, 0.1, 0.0]))
    data, _ = _simulate(params, 12, rng, missing=0.2)
    points = grid_of(2, 21, 6.0)
    got = e_step(Patterns.of(data), params, points)

    dens = np.exp(-0.5 * np.sum(points @ np.linalg.inv(corr) * points, axis=1))
    weight = dens / dens.sum()
    prob = params.probability(points)  # (Q, J)
    n = np.zeros((5, points.shape[0]))
    r = np.zeros_like(n)
    mass = np.zeros(points.shape[0])
    loglik = 0.0
    for i in range(data.n_subjects):
        like = weight.copy()
        for j in range(5):
            if data.values[i, j] == 1:
                like *= prob[:, j]
            elif data.values[i, j] == 0:
                like *= 1 - prob[:, j]
        loglik += np.log(like.sum())
        post = like / like.sum()
        mass += post
        for j in range(5):
            if data.values[i, j] != MISSING:
                n[j] += post
                r[j] += post * (data.values[i, j] == 1)
    np.testing.assert_allclose(got.n, n, atol=1e-12)
    np.testing.assert_allclose(got.r, r, atol=1e-12)
    np.testing.assert_allclose(got.mass, mass, atol=1e-12)
    assert got.loglik == pytest.approx(loglik, rel=1e-12)

    z, w = np.polynomial.hermite_e.hermegauss(40)
    zz = np.stack(np.meshgrid(z, z, indexing="ij"), axis=-1).reshape(-1, 2)
    ww = np.outer(w, w).ravel() / (2 * np.pi)
    theta = zz @ np.linalg.cholesky(corr).T
    z_items, c = params.logits(theta), params.c
    assert c is not None
    log_p = np.log(c + (1 - c) * expit(z_items))  # far nodes: 1 − P underflows, log it apart
    log_q = np.log1p(-c) + log_expit(-z_items)
    right, observed = data.values == 1, data.observed
    log_f = log_p @ (right & observed).T + log_q @ (~right & observed).T
    gauss_hermite = float(np.sum(np.log(ww @ np.exp(log_f))))
    assert mirt_log_likelihood(data, params, n_quad=41) == pytest.approx(gauss_hermite, rel=1e-8)


def test_correlation_update_maximises_the_latent_part() -> None:
    """The correlation step maximises Σ_q m_q log w_q(R): no nearby correlation matrix
    does better, on the coarse 3-factor grid too."""
    rng = np.random.default_rng(1)
    points = grid_of(3, 9, 6.0)
    true = np.array([[1.0, 0.5, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]])
    mass = np.exp(log_weights(points * 1.1, true)) * rng.uniform(0.5, 1.5, points.shape[0])
    best = correlation_step(np.eye(3), mass, points)
    value = float(mass @ log_weights(points, best))
    for _ in range(30):
        bump = rng.normal(0.0, 0.02, (3, 3))
        other = best + np.triu(bump, 1) + np.triu(bump, 1).T
        assert float(mass @ log_weights(points, other)) <= value + 1e-9


# --- R mirt --------------------------------------------------------------------------


@needs_polytomous
def test_lsat7_two_factor_confirmatory() -> None:
    """mirt(expand.table(LSAT7), 'F1 = 1-3\\n F2 = 3-5'): mirt asserts only its df, 20 =
    31 − 11 parameters. Its coefficients are not asserted, so ours are checked against
    a direct maximisation of the same quadrature likelihood (BFGS over all 11), with
    mirt's tolerance rule (mean relative difference < 1e-2) and the log-likelihood."""
    (figure,) = _refs()["lsat7_2f_confirmatory"]["figures"]
    data = _lsat7()
    pattern = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1]], dtype=bool)
    fit = MirtCalibrator(pattern).fit(data)
    assert fit.converged_
    assert 2**5 - 1 - fit.n_parameters_ == figure["value"] == 20
    ours = fit.params_
    packed = np.concatenate([ours.slopes[pattern], ours.d])
    grid, patterns = grid_of(2), Patterns.of(data)

    def negative(x: np.ndarray) -> float:
        slopes = np.zeros((5, 2))
        slopes[pattern] = x[:6]
        return -e_step(patterns, replace(ours, slopes=slopes, d=x[6:]), grid).loglik

    direct = minimize(negative, packed + 0.05, method="BFGS", options={"gtol": 1e-6})
    assert _mean_relative(packed, direct.x) < 1e-2
    assert fit.loglik_ >= -direct.fun - 1e-3
    assert fit.loglik_ == pytest.approx(mirt_log_likelihood(data, ours), abs=1e-9)
    assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 22)
    assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + 11 * np.log(1000))


@needs_polytomous
def test_lsat7_fits_nest_mirts_constrained_fits() -> None:
    """mirt's mod8 (F1 = 1-2, F2 = 3-5, orthogonal, with equality constraints) and mod6
    (the same factors correlated, equal slopes within a factor) are special cases of our
    unconstrained fits, so ours are at least as likely at mirt's asserted values. With
    free slopes the correlated model's likelihood rises towards ρ = 1 (README), where it
    is the 1-factor 2PL: the fit reaches mirt's 1-factor log-likelihood, −2658.805."""
    refs, data = _refs(), _lsat7()
    pattern = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=bool)

    (mod8,) = refs["lsat7_2f_cross_item_constraints"]["figures"]
    table = np.asarray(mod8["value"], dtype=float).reshape(5, 5, order="F")  # a1 a2 d g u
    at_mod8 = MirtParams(
        data.item_ids,
        table[:, :2],
        table[:, 2],
        ("F1", "F2"),
        np.eye(2),
        pattern,
        Structure.CONFIRMATORY,
    )
    orthogonal = MirtCalibrator(pattern).fit(data)
    assert orthogonal.converged_
    assert orthogonal.loglik_ >= mirt_log_likelihood(data, at_mod8) - 1e-6

    (mod6,) = refs["lsat7_2f_equal_slopes_correlated"]["figures"]
    values = np.asarray(mod6["value"], dtype=float)
    items, rho = values[:25].reshape(5, 5), values[28]
    at_mod6 = replace(
        at_mod8, slopes=items[:, :2], d=items[:, 2], correlation=np.array([[1, rho], [rho, 1]])
    )
    correlated = MirtCalibrator(pattern, correlated=True).fit(data)
    assert correlated.converged_ and correlated.n_parameters_ == 11
    assert correlated.loglik_ >= mirt_log_likelihood(data, at_mod6) - 1e-6
    assert correlated.params_.correlation[0, 1] > 0.99
    assert correlated.loglik_ == pytest.approx(-2658.805, abs=1e-3)


@pytest.mark.parametrize(("name", "loglik"), [("LSAT7", -2658.805), ("SAT12_binary_NA", -9455.849)])
def test_one_factor_reproduces_mirt(shared_data: Path, name: str, loglik: float) -> None:
    """One factor is the 2PL: mirt's log-likelihood and (a, d) on LSAT7 and on SAT12
    with its omitted answers missing (61 points on [−6, 6])."""
    file = {"LSAT7": "mirt_LSAT7.csv", "SAT12_binary_NA": "mirt_SAT12_binary_NA.csv"}[name]
    data = read_responses(shared_data / "human" / file, id_column=False)
    fit = MirtCalibrator(1, tol=1e-6).fit(data)
    assert fit.converged_ and data.is_complete == (name == "LSAT7")
    assert fit.loglik_ == pytest.approx(loglik, abs=0.01)
    with (shared_data / "human" / "ref" / f"{name}_mirt_2PL.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    theirs = np.array([[float(r["a"]), float(r["d_intercept"])] for r in rows])
    ours = np.column_stack([fit.params_.slopes[:, 0], fit.params_.d])
    assert _mean_relative(ours.ravel(), theirs.ravel()) < 2e-3


# --- recovery ------------------------------------------------------------------------


@pytest.mark.slow
def test_confirmatory_correlated_recovery_and_scores() -> None:
    """3 correlated factors, 30 items (three on two factors), 2,000 subjects, 5% missing."""
    rng = np.random.default_rng(2)
    pattern = _simple_pattern(30, 3)
    pattern[[5, 15, 25], [1, 2, 0]] = True
    corr = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.4], [0.3, 0.4, 1.0]])
    truth = _params(pattern, rng, corr)
    data, theta = _simulate(truth, 2000, rng, missing=0.05)
    fit = MirtCalibrator(pattern, ("a", "b", "c"), correlated=True).fit(data)
    est = fit.params_
    assert fit.converged_ and est.factors == ("a", "b", "c")
    assert est.structure is Structure.CONFIRMATORY
    assert np.corrcoef(est.slopes[pattern], truth.slopes[pattern])[0, 1] > 0.95
    assert np.all(est.slopes[~pattern] == 0)
    assert np.corrcoef(est.d, truth.d)[0, 1] > 0.99
    assert np.max(np.abs(est.correlation - corr)) < 0.06
    assert fit.n_parameters_ == 33 + 30 + 3
    assert fit.loglik_ >= mirt_log_likelihood(data, truth) - 1e-6
    # The standard errors are about the estimates' actual errors.
    assert fit.se_ is not None and np.all(np.isnan(fit.se_.slopes[~pattern]))
    z = (est.slopes[pattern] - truth.slopes[pattern]) / fit.se_.slopes[pattern]
    assert 0.6 < float(np.std(z)) < 1.5
    scores = mirt_scores(data, est)
    for k in range(3):
        assert np.corrcoef(scores.theta[:, k], theta[:, k])[0, 1] > 0.8
    assert np.all(scores.sd > 0) and np.all(scores.sd < 1)
    observed = data.accuracy()
    assert abs(float(np.mean(scores.expected_accuracy - observed))) < 0.01


@pytest.mark.slow
def test_exploratory_two_factors_recovered_after_rotation() -> None:
    """Two correlated simple-structure factors fitted exploratory (orthogonal, mirt's
    triangle) and rotated by oblimin: the loadings and the correlation come back, up to
    the order and signs of the factors; varimax keeps the factors orthogonal."""
    rng = np.random.default_rng(3)
    corr = np.array([[1.0, 0.4], [0.4, 1.0]])
    truth = _params(_simple_pattern(20, 2), rng, corr)
    data, _ = _simulate(truth, 3000, rng)
    fit = MirtCalibrator(2).fit(data)
    est = fit.params_
    assert fit.converged_ and est.structure is Structure.EXPLORATORY
    assert est.slopes[-1, 1] == 0 and fit.n_parameters_ == 20 * 2 - 1 + 20
    assert fit.loglik_ >= mirt_log_likelihood(data, truth) - 1e-6
    oblique = rotate(est, "oblimin")
    scaled = truth.slopes / 1.702
    true_loadings = scaled / np.sqrt(1 + np.einsum("jk,kl,jl->j", scaled, corr, scaled))[:, None]
    order = [0, 1] if oblique.loadings[0, 0] ** 2 > oblique.loadings[0, 1] ** 2 else [1, 0]
    got = oblique.loadings[:, order] * np.sign(oblique.loadings[:, order].sum(axis=0))
    assert np.max(np.abs(got - true_loadings)) < 0.1
    assert abs(abs(oblique.correlation[0, 1]) - 0.4) < 0.06
    # The rotated model is the same model.
    assert mirt_log_likelihood(data, oblique.params) == pytest.approx(fit.loglik_, abs=1e-4)
    varimax = rotate(est, "varimax")
    np.testing.assert_allclose(varimax.correlation, np.eye(2))
    assert mirt_log_likelihood(data, varimax.params) == pytest.approx(fit.loglik_, abs=1e-4)


@pytest.mark.slow
def test_m3pl_recovery_with_priors() -> None:
    rng = np.random.default_rng(4)
    pattern = _simple_pattern(24, 2)
    truth = _params(pattern, rng, np.array([[1.0, 0.3], [0.3, 1.0]]), guessing=True)
    data, _ = _simulate(truth, 3000, rng)
    priors = MirtPriors()
    fit = MirtCalibrator(pattern, correlated=True, guessing=True, priors=priors).fit(data)
    est = fit.params_
    assert fit.converged_ and est.c is not None and truth.c is not None
    assert fit.n_parameters_ == 24 * 3 + 1
    assert np.corrcoef(est.slopes[pattern], truth.slopes[pattern])[0, 1] > 0.8
    assert np.corrcoef(est.d, truth.d)[0, 1] > 0.95
    assert abs(float(np.mean(est.c - truth.c))) < 0.05
    assert abs(est.correlation[0, 1] - 0.3) < 0.1
    assert fit.logpost_ == pytest.approx(fit.loglik_ + priors.log_density(est))
    assert fit.logpost_ >= mirt_log_likelihood(data, truth) + priors.log_density(truth) - 1e-6
    assert fit.se_ is not None and fit.se_.c is not None and np.all(fit.se_.c > 0)


# --- EM, standard errors, rotation ---------------------------------------------------


def test_em_cycles_never_lower_the_log_posterior() -> None:
    """E-step, item M-step (3PL, priors) and correlation update, cycle after cycle: the
    log posterior never falls (a wrong gradient, information or update would)."""
    rng = np.random.default_rng(5)
    pattern = _simple_pattern(12, 2)
    pattern[5, 1] = True
    truth = _params(pattern, rng, np.array([[1.0, 0.5], [0.5, 1.0]]), guessing=True)
    data, _ = _simulate(truth, 400, rng, missing=0.1)
    priors = MirtPriors()
    patterns, points = Patterns.of(data), grid_of(2, 21)
    params = replace(truth, slopes=truth.slopes * 0.6, d=truth.d * 0.5, correlation=np.eye(2))
    values = []
    for _ in range(12):
        expected = e_step(patterns, params, points)
        values.append(expected.loglik + priors.log_density(params))
        new = m_step(params, expected, points, 1, priors)
        params = replace(
            new, correlation=correlation_step(params.correlation, expected.mass, points)
        )
    assert np.all(np.diff(values) >= -1e-9)
    assert values[-1] > values[0] + 1.0


def test_the_fit_is_a_stationary_point_of_the_log_posterior() -> None:
    """At a tightly converged 3PL fit with priors and a free correlation, the log
    posterior's numerical gradient vanishes in every free slope, d, logit(c) and ρ."""
    rng = np.random.default_rng(11)
    pattern = _simple_pattern(8, 2)
    pattern[3, 1] = True
    truth = _params(pattern, rng, np.array([[1.0, 0.4], [0.4, 1.0]]), guessing=True)
    data, _ = _simulate(truth, 500, rng, missing=0.05)
    priors = MirtPriors()
    fit = MirtCalibrator(
        pattern, correlated=True, guessing=True, priors=priors, n_quad=21, tol=1e-8, max_iter=3000
    ).fit(data)
    est = fit.params_
    assert fit.converged_ and est.c is not None

    def logpost(p: MirtParams) -> float:
        return mirt_log_likelihood(data, p, n_quad=21) + priors.log_density(p)

    assert logpost(est) == pytest.approx(fit.logpost_, abs=1e-9)
    gamma = np.log(est.c / (1 - est.c))
    h = 1e-4
    for j in range(8):
        for k in range(3 + 1):
            if k < 2 and not pattern[j, k]:
                continue
            moves = []
            for sign in (1, -1):
                slopes, d, g = est.slopes.copy(), est.d.copy(), gamma.copy()
                if k < 2:
                    slopes[j, k] += sign * h
                elif k == 2:
                    d[j] += sign * h
                else:
                    g[j] += sign * h
                moves.append(logpost(replace(est, slopes=slopes, d=d, c=1 / (1 + np.exp(-g)))))
            assert abs(moves[0] - moves[1]) / (2 * h) < 1e-3, (j, k)
    rho = est.correlation[0, 1]
    up, down = (
        logpost(replace(est, correlation=np.array([[1, r], [r, 1]]))) for r in (rho + h, rho - h)
    )
    assert abs(up - down) / (2 * h) < 1e-3


def test_standard_errors_are_the_cross_product_of_numerical_scores() -> None:
    """Each pattern's score is the derivative of its log marginal likelihood: the
    item blocks built from central differences give the same standard errors."""
    rng = np.random.default_rng(6)
    pattern = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [1, 1]], dtype=bool)
    params = _params(pattern, rng, np.array([[1.0, 0.3], [0.3, 1.0]]), guessing=True)
    data, _ = _simulate(params, 300, rng, missing=0.1)
    patterns, points = Patterns.of(data), grid_of(2, 15)
    se = item_standard_errors(patterns, params, points)

    def log_marginals(p: MirtParams) -> np.ndarray:
        log_p, log_q = item_log_probs(p, points)
        log_w = log_weights(points, p.correlation)
        return np.concatenate(
            [c.log_marginal for c in posterior_chunks(patterns, log_p, log_q, log_w)]
        )

    def moved(j: int, coord: int, h: float) -> MirtParams:
        slopes, d = params.slopes.copy(), params.d.copy()
        assert params.c is not None
        c = params.c.copy()
        if coord < 2:
            slopes[j, coord] += h
        elif coord == 2:
            d[j] += h
        else:
            gamma = np.log(c[j] / (1 - c[j])) + h
            c[j] = 1 / (1 + np.exp(-gamma))
        return replace(params, slopes=slopes, d=d, c=c)

    h = 1e-5
    for j in range(6):
        coords = [k for k in range(2) if pattern[j, k]] + [2, 3]
        scores = np.stack(
            [
                (log_marginals(moved(j, k, h)) - log_marginals(moved(j, k, -h))) / (2 * h)
                for k in coords
            ],
            axis=1,
        )
        cov = np.linalg.inv(scores.T @ (scores * patterns.counts[:, None]))
        expected = np.sqrt(np.diag(cov))
        got = [se.slopes[j, k] for k in range(2) if pattern[j, k]] + [se.d[j]]
        assert params.c is not None and se.c is not None
        got.append(se.c[j] / (params.c[j] * (1 - params.c[j])))
        np.testing.assert_allclose(got, expected, rtol=1e-5)
        assert np.all(np.isnan(se.slopes[j, ~pattern[j]]))


def test_one_factor_standard_errors_match_the_unidimensional_em(shared_data: Path) -> None:
    """The slopes' XPD standard errors agree with irt.item_se's for the same 2PL (the
    slope's variance does not depend on how the other coordinate is parametrised)."""
    data = read_responses(shared_data / "human" / "mirt_LSAT7.csv", id_column=False)
    ours = MirtCalibrator(1, tol=1e-7).fit(data)
    theirs = EMCalibrator("2pl", priors=ItemPriors.none(), n_quad=61, tol=1e-7).fit(data)
    assert ours.se_ is not None and theirs.params_.se_a is not None
    np.testing.assert_allclose(ours.se_.slopes[:, 0], theirs.params_.se_a, rtol=2e-3)


def test_rotation_recovers_a_rotated_simple_structure() -> None:
    """Oblimin undoes any rotation of a perfect oblique simple structure exactly (the
    quartimin criterion is 0 there), with its factor correlation; varimax reaches the
    same criterion value as Kaiser's classic pairwise algorithm."""
    rng = np.random.default_rng(7)
    loadings = np.where(_simple_pattern(12, 3), rng.uniform(0.4, 0.8, (12, 3)), 0.0)
    corr = np.array([[1.0, 0.4, 0.2], [0.4, 1.0, 0.3], [0.2, 0.3, 1.0]])
    communality = np.einsum("jk,kl,jl->j", loadings, corr, loadings)
    slopes = 1.702 * loadings / np.sqrt(1 - communality)[:, None]
    turn = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    orthogonal = slopes @ np.linalg.cholesky(corr) @ turn
    params = MirtParams(
        tuple(f"i{j}" for j in range(12)),
        orthogonal,
        np.zeros(12),
        ("a", "b", "c"),
        np.eye(3),
        np.ones((12, 3), dtype=bool),
        Structure.EXPLORATORY,
    )
    got = rotate(params, "oblimin")
    assert got.criterion < 1e-12
    # Items 4f..4f+3 load on factor f alone.
    perm = [int(np.argmax(np.abs(got.loadings[4 * f]))) for f in range(3)]
    assert sorted(perm) == [0, 1, 2]
    np.testing.assert_allclose(got.loadings[:, perm], loadings, atol=1e-6)
    np.testing.assert_allclose(got.correlation[np.ix_(perm, perm)], corr, atol=1e-6)
    np.testing.assert_allclose(got.params.probability(np.zeros((1, 3))), 0.5)

    vari = rotate(params, "varimax", normalize=False)
    a = standardized_loadings(orthogonal)
    for _ in range(200):  # Kaiser (1958): rotate each pair of factors by its optimal angle
        for i in range(3):
            for j in range(i + 1, 3):
                x, y = a[:, i], a[:, j]
                u, v = x**2 - y**2, 2 * x * y
                num = 2 * (np.sum(u * v) - np.sum(u) * np.sum(v) / 12)
                den = np.sum(u**2 - v**2) - (np.sum(u) ** 2 - np.sum(v) ** 2) / 12
                phi = 0.25 * np.arctan2(num, den)
                a[:, i], a[:, j] = (
                    x * np.cos(phi) + y * np.sin(phi),
                    -x * np.sin(phi) + y * np.cos(phi),
                )
    sq = a**2
    kaiser = -0.25 * float(np.sum((sq - sq.mean(axis=0)) ** 2))
    assert vari.criterion == pytest.approx(kaiser, abs=1e-10)
    with pytest.raises(IRTError, match="unknown rotation"):
        rotate(params, "promax")  # type: ignore[arg-type]


# --- input ---------------------------------------------------------------------------


def test_missing_answers_and_empty_subjects() -> None:
    """A subject with no answers keeps the prior (EAP 0) and no expected accuracy; an
    item answered by half the subjects is still estimated."""
    rng = np.random.default_rng(8)
    truth = _params(_simple_pattern(10, 2), rng)
    data, _ = _simulate(truth, 600, rng, missing=0.1)
    values = data.values.copy()
    values[0] = MISSING
    values[::2, 3] = MISSING
    data = ResponseMatrix(data.subject_ids, data.item_ids, values)
    fit = MirtCalibrator(truth.pattern, correlated=True).fit(data)
    assert fit.converged_ and np.all(np.isfinite(fit.params_.slopes))
    scores = mirt_scores(data, fit.params_)
    np.testing.assert_allclose(scores.theta[0], 0.0, atol=1e-9)
    assert np.isnan(scores.expected_accuracy[0]) and np.all(
        np.isfinite(scores.expected_accuracy[1:])
    )
    assert fit.se_ is not None and np.isfinite(fit.se_.slopes[3, 0])


def test_bad_input_is_refused() -> None:
    rng = np.random.default_rng(9)
    truth = _params(_simple_pattern(6, 2), rng)
    data, _ = _simulate(truth, 50, rng)
    with pytest.raises(IRTError, match="pattern has 5 rows for 6 items"):
        MirtCalibrator(truth.pattern[:5]).fit(data)
    lonely = truth.pattern.copy()
    lonely[:2, 1] = False
    lonely[3:5, 1] = False
    with pytest.raises(IRTError, match=r"at least 2 items.*factor 2 has fewer"):
        MirtCalibrator(lonely)
    with pytest.raises(IRTError, match="items × factors"):
        MirtCalibrator(np.ones(6, dtype=bool))
    with pytest.raises(IRTError, match="booleans"):
        MirtCalibrator(np.full((6, 2), 2))
    for k in (0, 6):
        with pytest.raises(IRTError, match="1 to 5 factors"):
            MirtCalibrator(k)
    with pytest.raises(IRTError, match=r"923,521 nodes.*use fewer points"):
        MirtCalibrator(4, n_quad=31)
    with pytest.raises(IRTError, match="exploratory factors are fitted orthogonal"):
        MirtCalibrator(2, correlated=True)
    with pytest.raises(IRTError, match="2 factors but 1 factor names"):
        MirtCalibrator(truth.pattern, ("only",))
    with pytest.raises(IRTError, match=r"at least 6 items.*got 5"):
        MirtCalibrator(5).fit(data.subset(items=[0, 1, 2, 3, 4]))
    with pytest.raises(IRTError, match="tol must be positive"):
        MirtCalibrator(2, tol=0)
    with pytest.raises(IRTError, match="same items"):
        mirt_scores(data.subset(items=[0, 1, 2, 3, 4, 5][::-1]), truth)
    with pytest.raises(IRTError, match="slope_sd must be positive"):
        MirtPriors(slope_sd=0)


def test_non_convergence_warns() -> None:
    rng = np.random.default_rng(10)
    truth = _params(_simple_pattern(8, 2), rng)
    data, _ = _simulate(truth, 200, rng)
    with pytest.warns(ConvergenceWarning, match="without converging"):
        fit = MirtCalibrator(truth.pattern, correlated=True, max_iter=2).fit(data)
    assert not fit.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert MirtCalibrator(truth.pattern, standard_errors=False).fit(data).se_ is None
