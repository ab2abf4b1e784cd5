"""The bifactor 2PL: the dimension reduction against full quadrature, R mirt's asserted
coefficients, and parameter recovery."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from irt.bifactor import (
    GENERAL_ONLY,
    BifactorCalibrator,
    BifactorParams,
    BifactorPriors,
    bifactor_log_likelihood,
    bifactor_scores,
    group_codes,
)
from irt.errors import ConvergenceWarning, IRTError
from irt.quadrature import normal_grid
from irt.responses import MISSING, ResponseMatrix
from itempool.formats.responses import read_responses

POLYTOMOUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human" / "polytomous"


def _simulate(
    params: BifactorParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> ResponseMatrix:
    general = rng.normal(size=(n, 1))
    specific = rng.normal(size=(n, len(params.groups)))
    at_item = np.where(params.group >= 0, specific[:, np.maximum(params.group, 0)], 0.0)
    prob = params.probability(general, at_item)
    values = (rng.random(prob.shape) < prob).astype(np.int8)
    values[rng.random(values.shape) < missing] = MISSING
    subjects = tuple(f"s{i}" for i in range(n))
    return ResponseMatrix(subjects, params.item_ids, values)


def _params(
    rng: np.random.Generator, group: np.ndarray, n_groups: int, guessing: bool = False
) -> BifactorParams:
    n = group.size
    return BifactorParams(
        item_ids=tuple(f"i{j}" for j in range(n)),
        a_general=rng.lognormal(0.2, 0.3, n),
        a_specific=np.where(group >= 0, rng.uniform(0.4, 1.4, n), 0.0),
        d=rng.normal(0, 1, n),
        group=group,
        groups=tuple(f"g{k}" for k in range(n_groups)),
        c=rng.uniform(0.05, 0.25, n) if guessing else None,
    )


@pytest.mark.parametrize("guessing", [False, True])
def test_the_dimension_reduction_equals_full_quadrature(guessing: bool) -> None:
    """Two groups and a general-only item: the bifactor likelihood on (G, S) grids per
    group equals the product-grid integral over (G, S1, S2)."""
    rng = np.random.default_rng(0)
    group = np.array([0, 0, 0, 1, 1, 1, GENERAL_ONLY])
    params = _params(rng, group, 2, guessing)
    data = _simulate(params, 40, rng, missing=0.1)
    grid = normal_grid(15, 5.0)
    x, w = grid.points, grid.weights
    g, s1, s2 = np.meshgrid(x, x, x, indexing="ij")
    weight = (w[:, None, None] * w[None, :, None] * w[None, None, :]).ravel()
    at_item = np.stack([s1.ravel(), s2.ravel()], axis=1)[:, np.maximum(group, 0)]
    at_item = np.where(group >= 0, at_item, 0.0)
    prob = params.probability(g.ravel()[:, None], at_item)  # (nodes, J)
    right, observed = data.values == 1, data.observed
    log_f = np.log(prob) @ (right & observed).T + np.log(1 - prob) @ (~right & observed).T
    expected = float(np.sum(np.log(weight @ np.exp(log_f))))
    assert bifactor_log_likelihood(data, params, n_quad=15, bound=5.0) == pytest.approx(
        expected, rel=1e-10
    )


@pytest.mark.slow
@pytest.mark.skipif(not POLYTOMOUS.is_dir(), reason="../shared/data/human/polytomous is absent")
def test_sat12_bifactor_matches_r_mirt() -> None:
    """mirt's test-03-bfactor.R: bfactor(key2binary(SAT12, key), specific). Its asserted
    vector holds per item (aG, lo, hi, aS, lo, hi, d, lo, hi); mirt compares by mean
    relative difference with tolerance 1e-2."""
    data = read_responses(POLYTOMOUS / "SAT12_binary.csv", id_column=False)
    (ref,) = [
        f
        for f in json.loads((POLYTOMOUS / "refs.json").read_text())
        if f["id"] == "sat12_bifactor_2pl"
    ]
    (coefs,) = [f for f in ref["figures"] if f["what"].startswith("coefficients")]
    block = np.asarray(coefs["value"], dtype=float).reshape(32, 9)
    # The groups as the R call gives them: "specific <- c(2,3,2,...)".
    (call,) = [line for line in ref["r_call_verbatim"] if "specific <- c(" in line]
    specific = np.array(call.split("c(")[1].rstrip(")").split(","), dtype=int) - 1
    fit = BifactorCalibrator().fit(data, specific, groups=("1", "2", "3"))
    assert fit.converged_
    ours = fit.params_
    theirs = BifactorParams(
        ours.item_ids, block[:, 0], block[:, 3], block[:, 6], ours.group, ours.groups
    )
    a = np.concatenate([ours.a_general, ours.a_specific, ours.d])
    b = np.concatenate([theirs.a_general, theirs.a_specific, theirs.d])
    assert np.mean(np.abs(a - b)) / np.mean(np.abs(b)) < 1e-2
    # Our optimum is at least as likely as mirt's asserted parameters, and barely more.
    at_mirt = bifactor_log_likelihood(data, theirs)
    assert at_mirt - 1e-6 <= fit.loglik_ <= at_mirt + 0.5
    assert fit.n_parameters_ == 96  # mirt's df: 2^32 - 1 - 96


@pytest.mark.slow
def test_parameters_are_recovered() -> None:
    rng = np.random.default_rng(1)
    group = np.repeat([0, 1, 2, GENERAL_ONLY], [10, 10, 10, 3])
    truth = _params(rng, group, 3)
    data = _simulate(truth, 3000, rng, missing=0.05)
    fit = BifactorCalibrator().fit(data, group, groups=truth.groups)
    est = fit.params_
    assert fit.converged_
    assert np.corrcoef(est.a_general, truth.a_general)[0, 1] > 0.9
    loaded = group >= 0
    assert np.corrcoef(est.a_specific[loaded], truth.a_specific[loaded])[0, 1] > 0.85
    assert np.corrcoef(est.d, truth.d)[0, 1] > 0.98
    assert np.all(est.a_specific[~loaded] == 0.0)
    # The truth is no more likely than the fit (EM maximises the same likelihood).
    assert fit.loglik_ >= bifactor_log_likelihood(data, truth) - 1e-6


def test_group_codes() -> None:
    codes, names = group_codes(["dosing", "ethics", "dosing", None, "", "ethics"])
    assert names == ("dosing", "ethics")
    np.testing.assert_array_equal(codes, [0, 1, 0, GENERAL_ONLY, GENERAL_ONLY, 1])
    with pytest.raises(IRTError, match="at least 2 items; 'law' has fewer"):
        group_codes(["dosing", "dosing", "law"])


def test_bad_input_is_refused() -> None:
    rng = np.random.default_rng(2)
    group = np.array([0, 0, 1, 1])
    params = _params(rng, group, 2)
    data = _simulate(params, 30, rng)
    with pytest.raises(IRTError, match="one group code per item"):
        BifactorCalibrator().fit(data, group[:3])
    with pytest.raises(IRTError, match="2 groups coded but 1 named"):
        BifactorCalibrator().fit(data, group, groups=("a",))
    with pytest.raises(IRTError, match="one value per item"):
        BifactorParams(
            params.item_ids, params.d[:3], params.a_specific, params.d, group, ("a", "b")
        )
    with pytest.raises(IRTError, match="tol must be positive"):
        BifactorCalibrator(tol=0)


def test_priors_keep_few_subjects_identified() -> None:
    """30 subjects, as an LLM leaderboard has: without priors some slopes run to the
    bound; with them every slope stays moderate and the log posterior is reported."""
    rng = np.random.default_rng(3)
    group = np.repeat([0, 1, 2], 40)
    truth = _params(rng, group, 3)
    data = _simulate(truth, 30, rng)
    with warnings.catch_warnings():  # it does not converge: the point of the test
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = BifactorCalibrator(max_iter=60).fit(data, group)
    assert np.max(np.abs(plain.params_.a_specific)) > 5
    priors = BifactorPriors()
    fit = BifactorCalibrator(priors=priors).fit(data, group)
    assert fit.converged_
    assert np.max(np.abs(fit.params_.a_general)) < 4 and np.max(np.abs(fit.params_.a_specific)) < 3
    assert fit.logpost_ == pytest.approx(fit.loglik_ + priors.log_density(fit.params_))
    assert fit.logpost_ >= bifactor_log_likelihood(data, truth) + priors.log_density(truth)
    with pytest.raises(IRTError, match="d_sd must be positive"):
        BifactorPriors(d_sd=0)


def test_scores_and_expected_accuracy() -> None:
    rng = np.random.default_rng(4)
    group = np.repeat([0, 1, GENERAL_ONLY], [25, 25, 5])
    truth = _params(rng, group, 2)
    data = _simulate(truth, 400, rng, missing=0.1)
    scores = bifactor_scores(data, truth)
    assert scores.specific.shape == (400, 2) and np.all(scores.general_sd > 0)
    # The model's expected accuracy tracks the observed one closely with 55 items.
    observed = data.accuracy()
    assert np.corrcoef(scores.expected_accuracy, observed)[0, 1] > 0.95
    assert abs(float(np.mean(scores.expected_accuracy - observed))) < 0.01
    # A subject's general score rises with its right answers on general-only items.
    assert np.corrcoef(scores.general, observed)[0, 1] > 0.8


def test_em_cycles_never_lower_the_3pl_log_posterior() -> None:
    """Each E-step + M-step (Fisher scoring with the priors, c as logit) raises the
    log posterior: a wrong gradient or information would break this."""
    rng = np.random.default_rng(5)
    group = np.repeat([0, 1, GENERAL_ONLY], [12, 12, 4])
    truth = _params(rng, group, 2, guessing=True)
    data = _simulate(truth, 500, rng)
    priors = BifactorPriors()
    values = []
    for max_iter in (2, 4, 8, 16):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = BifactorCalibrator(priors=priors, guessing=True, max_iter=max_iter).fit(
                data, group
            )
        values.append(fit.logpost_)
    assert values == sorted(values)


@pytest.mark.slow
def test_3pl_parameters_are_recovered() -> None:
    rng = np.random.default_rng(6)
    group = np.repeat([0, 1, 2], 15)
    truth = _params(rng, group, 3, guessing=True)
    data = _simulate(truth, 5000, rng)
    priors = BifactorPriors()
    fit = BifactorCalibrator(priors=priors, guessing=True).fit(data, group)
    est = fit.params_
    assert fit.converged_ and est.c is not None and truth.c is not None
    assert fit.n_parameters_ == 3 * 45 + 45
    assert np.corrcoef(est.a_general, truth.a_general)[0, 1] > 0.85
    assert np.corrcoef(est.d, truth.d)[0, 1] > 0.95
    assert abs(float(np.mean(est.c - truth.c))) < 0.05
    truth_logpost = bifactor_log_likelihood(data, truth) + priors.log_density(truth)
    assert fit.logpost_ >= truth_logpost - 1e-6


def _numerical_block_se(
    data: ResponseMatrix, fit: BifactorCalibrator, j: int, h: float = 1e-3
) -> np.ndarray:
    """Item j's standard errors of (aG, [aS,] d[, c]) from the central-difference Hessian
    of the log posterior (the marginal log-likelihood without priors) in item j's own
    parameters, c as logit(c), the other items' held fixed."""
    p = fit.params_
    coords = ["a_general", "a_specific", "d"] if p.group[j] >= 0 else ["a_general", "d"]
    if p.c is not None:
        coords.append("gamma")

    def logpost(shifts: dict[str, float]) -> float:
        moved = {name: getattr(p, name).copy() for name in ("a_general", "a_specific", "d")}
        for name in ("a_general", "a_specific", "d"):
            moved[name][j] += shifts.get(name, 0.0)
        c = None
        if p.c is not None:
            c = p.c.copy()
            gamma = np.log(c[j] / (1 - c[j])) + shifts.get("gamma", 0.0)
            c[j] = 1 / (1 + np.exp(-gamma))
        shifted = BifactorParams(
            p.item_ids, moved["a_general"], moved["a_specific"], moved["d"], p.group, p.groups, c
        )
        grid = fit.grid
        value = bifactor_log_likelihood(data, shifted, grid.size, float(grid.points[-1]))
        return value + (0.0 if fit.priors is None else fit.priors.log_density(shifted))

    center = logpost({})
    size = len(coords)
    hessian = np.zeros((size, size))
    for a in range(size):
        up, down = logpost({coords[a]: h}), logpost({coords[a]: -h})
        hessian[a, a] = (up - 2 * center + down) / h**2
        for b in range(a + 1, size):
            corners = [
                sa * sb * logpost({coords[a]: sa * h, coords[b]: sb * h})
                for sa in (1, -1)
                for sb in (1, -1)
            ]
            hessian[a, b] = hessian[b, a] = sum(corners) / (4 * h**2)
    se = np.sqrt(np.diag(np.linalg.inv(-hessian)))
    if p.c is not None:
        se[-1] *= p.c[j] * (1 - p.c[j])  # the delta method to c
    return np.asarray(se)


@pytest.mark.parametrize(("guessing", "n", "rtol"), [(False, 1500, 0.1), (True, 3000, 0.25)])
def test_standard_errors_match_the_numerical_information(
    guessing: bool, n: int, rtol: float
) -> None:
    """The cross-product (XPD) standard errors, plus the prior's curvature in the 3PL,
    agree with those from the numerically differentiated observed information of each
    item's block (the 3PL's cross-product converges more slowly in n)."""
    rng = np.random.default_rng(7 if not guessing else 8)
    group = np.repeat([0, 1, GENERAL_ONLY], [4, 4, 2])
    truth = _params(rng, group, 2, guessing)
    data = _simulate(truth, n, rng)
    priors = BifactorPriors() if guessing else None
    fit = BifactorCalibrator(n_quad=15, bound=5.0, priors=priors, guessing=guessing).fit(
        data, group
    )
    assert fit.converged_
    assert (fit.se_c_ is None) == (not guessing)
    loaded = group >= 0
    assert np.all(np.isnan(fit.se_a_specific_[~loaded]))
    for j in range(group.size):
        ours = [fit.se_a_general_[j], fit.se_a_specific_[j], fit.se_d_[j]]
        if not loaded[j]:
            ours = [ours[0], ours[2]]
        if fit.se_c_ is not None:
            ours.append(fit.se_c_[j])
        np.testing.assert_allclose(ours, _numerical_block_se(data, fit, j), rtol=rtol)


def test_information_criteria() -> None:
    """AIC = −2 logL + 2k and BIC = −2 logL + k log N, and on bifactor data both prefer
    the bifactor model to the unidimensional one (every item general-only)."""
    rng = np.random.default_rng(9)
    group = np.repeat([0, 1, 2], 6)
    truth = _params(rng, group, 3)
    data = _simulate(truth, 800, rng)
    bifactor = BifactorCalibrator(n_quad=21, standard_errors=False).fit(data, group)
    flat = np.full(group.size, GENERAL_ONLY)
    unidimensional = BifactorCalibrator(n_quad=21, standard_errors=False).fit(data, flat)
    for fit, k in ((bifactor, 3 * 18), (unidimensional, 2 * 18)):
        assert fit.n_parameters_ == k and fit.n_subjects_ == 800
        assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 2 * k)
        assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + k * np.log(800))
    assert bifactor.aic_ < unidimensional.aic_ and bifactor.bic_ < unidimensional.bic_
    assert not hasattr(bifactor, "se_")


@pytest.mark.parametrize("guessing", [False, True])
def test_float32_cycles_reach_the_float64_optimum(guessing: bool) -> None:
    """The float32 E-step (float64 sums) and the all-float64 one converge to the same
    parameters and log posterior."""
    rng = np.random.default_rng(10)
    group = np.repeat([0, 1, 2, GENERAL_ONLY], [8, 8, 8, 2])
    truth = _params(rng, group, 3, guessing)
    data = _simulate(truth, 600, rng, missing=0.1)
    priors = BifactorPriors() if guessing else None
    fits = [
        BifactorCalibrator(
            tol=1e-6, priors=priors, guessing=guessing, float32=single, standard_errors=False
        ).fit(data, group)
        for single in (True, False)
    ]
    assert all(fit.converged_ for fit in fits)
    single, double = (fit.params_ for fit in fits)
    for name in ("a_general", "a_specific", "d", "c"):
        if getattr(single, name) is not None:
            np.testing.assert_allclose(getattr(single, name), getattr(double, name), atol=1e-3)
    assert fits[0].logpost_ == pytest.approx(fits[1].logpost_, abs=1e-5)


def test_standard_errors_are_nan_where_not_identified() -> None:
    """An item nobody answered has no information: NaN standard errors without priors,
    the priors' own SDs with them."""
    rng = np.random.default_rng(12)
    group = np.repeat([0, 1, GENERAL_ONLY], [4, 4, 2])
    data = _simulate(_params(rng, group, 2), 400, rng)
    values = data.values.copy()
    values[:, 3] = MISSING
    data = ResponseMatrix(data.subject_ids, data.item_ids, values)
    plain = BifactorCalibrator(n_quad=15).fit(data, group)
    assert np.isnan(plain.se_a_general_[3]) and np.isnan(plain.se_a_specific_[3])
    assert np.isnan(plain.se_d_[3]) and np.all(np.isfinite(plain.se_d_[np.arange(10) != 3]))
    priors = BifactorPriors()
    shrunk = BifactorCalibrator(n_quad=15, priors=priors).fit(data, group)
    np.testing.assert_allclose(
        [shrunk.se_a_general_[3], shrunk.se_a_specific_[3], shrunk.se_d_[3]],
        [priors.a_general_sd, priors.a_specific_sd, priors.d_sd],
    )


@pytest.mark.parametrize("guessing", [False, True])
def test_shared_answer_patterns_give_the_same_e_step(guessing: bool) -> None:
    # Four items a group, with missing answers and a general-only item: subjects alike
    # in a group share its integral, and the expected counts and log-likelihood are
    # those of a row per subject.
    from irt.bifactor_estep import Answers, e_step

    rng = np.random.default_rng(12)
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1, GENERAL_ONLY])
    params = _params(rng, group, 2, guessing)
    data = _simulate(params, 600, rng, missing=0.05)
    grid = normal_grid(21, 6.0)
    one_each = Answers.of(data, group, 2)
    shared = Answers.of(data, group, 2, share_patterns=True)
    assert all(p is not None and p.size == 600 for p in shared.patterns[:2])
    assert shared.right[0].shape[0] < 100 and shared.patterns[-1] is None
    counts, loglik = e_step(one_each, params, grid.points, grid.log_weights)
    counts_shared, loglik_shared = e_step(shared, params, grid.points, grid.log_weights)
    assert loglik_shared == pytest.approx(loglik, rel=1e-12)
    for k in range(3):
        np.testing.assert_array_equal(counts_shared.support[k], counts.support[k])
        np.testing.assert_allclose(counts_shared.r[k], counts.r[k], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(counts_shared.n[k], counts.n[k], rtol=1e-9, atol=1e-12)


def test_a_slope_running_to_a_bound_is_named_and_the_fit_stops() -> None:
    # R mirt's bfactor test data: psychTools' ability items, one specific factor per
    # item type (issue 42). matrix.45's slopes run on along a ridge (6.9 on the specific
    # after 500 cycles) while the log-likelihood gains less than 1e-4 a cycle.
    path = POLYTOMOUS.parent / "psychTools_ability.csv"
    if not path.exists():
        pytest.skip("../shared/data is not here")
    data = read_responses(path, id_column=False)
    with pytest.warns(ConvergenceWarning, match="still moved .*slope of item matrix.45"):
        fit = BifactorCalibrator().fit(data, [k // 4 for k in range(16)])
    assert not fit.converged_ and fit.stopped_ == "log-likelihood" and fit.n_iter_ < 450
    assert fit.drift_ is not None and abs(fit.drift_.per_cycle) > 10 * fit.tol
    # 500 cycles reach −12404.344 and the ridge climbs on by ever less: a likelihood
    # ratio statistic of 0.2 at most between the two.
    assert fit.loglik_ == pytest.approx(-12404.344, abs=0.1)
