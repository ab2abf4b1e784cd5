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
from irt.readers import read_responses
from irt.responses import MISSING, ResponseMatrix

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
