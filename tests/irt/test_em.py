"""EM calibration: agreement with R mirt on real data, parameter recovery, behaviour."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, DataWarning
from irt.estep import marginal_log_likelihood
from irt.models import ItemParams, ModelKind
from irt.priors import ItemPriors
from irt.quadrature import normal_grid
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from itempool.formats.responses import read_responses

# data set name in ref/ -> file in human/
HUMAN = {
    "LSAT7": "mirt_LSAT7.csv",
    "LSAT6": "mirt_LSAT6.csv",
    "SLF": "mirt_SLF.csv",
    "SAT12_binary": "mirt_SAT12_binary.csv",
    "SAT12_binary_NA": "mirt_SAT12_binary_NA.csv",
    "ability": "psychTools_ability.csv",
    "ltm_Abortion": "ltm_Abortion.csv",
}


def _mirt_summary(shared: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (shared / "human" / "ref" / "summary.csv").open() as fh:
        return {(row["data"], row["model"]): row for row in csv.DictReader(fh)}


def _mirt_items(shared: Path, name: str, model: str) -> dict[str, np.ndarray]:
    with (shared / "human" / "ref" / f"{name}_mirt_{model}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    return {k: np.array([float(r[k]) for r in rows]) for k in ("a", "b", "c")}


def _fit_like_mirt(shared: Path, name: str, model: str) -> EMCalibrator:
    responses = read_responses(shared / "human" / HUMAN[name], id_column=False)
    # mirt's set-up: 61 points on [-6, 6], no priors; a tighter tolerance than mirt's
    # 1e-4 so that the comparison measures the optimum, not where either stopped.
    return EMCalibrator(
        model, priors=ItemPriors.none(), n_quad=61, bound=6.0, tol=1e-6, max_iter=5000
    ).fit(responses)


@pytest.mark.parametrize("name", list(HUMAN))
def test_2pl_reproduces_mirt_on_real_data(shared_data: Path, name: str) -> None:
    ref = _mirt_summary(shared_data)[(name, "2PL")]
    fitted = _fit_like_mirt(shared_data, name, "2pl")
    assert fitted.converged_
    assert fitted.loglik_ == pytest.approx(float(ref["logLik"]), abs=0.01)
    items = _mirt_items(shared_data, name, "2PL")
    np.testing.assert_allclose(fitted.params_.a, items["a"], atol=0.02)
    np.testing.assert_allclose(fitted.params_.b, items["b"], atol=0.02)


def test_mirt_test_suite_values(shared_data: Path) -> None:
    # The two log-likelihoods R mirt's own tests assert.
    assert _fit_like_mirt(shared_data, "LSAT7", "2pl").loglik_ == pytest.approx(-2658.805, abs=0.01)
    assert _fit_like_mirt(shared_data, "LSAT6", "2pl").loglik_ == pytest.approx(-2466.653, abs=0.01)


@pytest.mark.parametrize("name", ["LSAT7", "LSAT6", "SLF", "ltm_Abortion"])
def test_3pl_reaches_at_least_mirts_optimum_where_mirt_converged(
    shared_data: Path, name: str
) -> None:
    ref = _mirt_summary(shared_data)[(name, "3PL")]
    assert ref["converged"] == "TRUE"
    fitted = _fit_like_mirt(shared_data, name, "3pl")
    assert fitted.loglik_ >= float(ref["logLik"]) - 1e-3


@pytest.mark.parametrize(("name", "tolerance"), [("ltm_Abortion", 0.02), ("LSAT7", 0.05)])
def test_3pl_parameters_near_mirt_where_well_identified(
    shared_data: Path, name: str, tolerance: float
) -> None:
    fitted = _fit_like_mirt(shared_data, name, "3pl")
    items = _mirt_items(shared_data, name, "3PL")
    for key in ("a", "b", "c"):
        np.testing.assert_allclose(getattr(fitted.params_, key), items[key], atol=tolerance)


def test_loglik_is_the_marginal_loglik_of_the_returned_parameters(shared_data: Path) -> None:
    responses = read_responses(shared_data / "human" / HUMAN["SAT12_binary_NA"], id_column=False)
    fitted = EMCalibrator("2pl", priors=ItemPriors.none(), tol=1e-6).fit(responses)
    again = marginal_log_likelihood(responses, fitted.params_, normal_grid(61))
    assert fitted.loglik_ == pytest.approx(again, abs=1e-6)


def test_plain_ml_loglik_never_decreases() -> None:
    rng = np.random.default_rng(5)
    params = random_params(15, rng, "2pl")
    data = simulate_responses(params, rng.normal(size=800), rng)
    history: list[float] = []
    EMCalibrator(
        "2pl", priors=ItemPriors.none(), tol=1e-7, progress=lambda i, ll, ch: history.append(ll)
    ).fit(data)
    assert len(history) > 3
    assert np.all(np.diff(history) >= -1e-6)


@pytest.mark.slow
def test_3pl_recovery_2000_by_100() -> None:
    rng = np.random.default_rng(11)
    params = random_params(100, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=2000), rng)
    fitted = EMCalibrator("3pl").fit(data)
    assert fitted.converged_
    assert np.corrcoef(fitted.params_.a, params.a)[0, 1] > 0.85
    assert np.corrcoef(fitted.params_.b, params.b)[0, 1] > 0.95
    assert np.all(fitted.params_.c < 0.5)


@pytest.mark.slow
def test_llm_regime_few_subjects_many_items_with_missing_answers() -> None:
    rng = np.random.default_rng(12)
    params = random_params(1500, rng, "3pl")
    theta = rng.normal(size=40)
    data = simulate_responses(params, theta, rng, missing_rate=0.1)
    fitted = EMCalibrator("3pl").fit(data)
    assert fitted.converged_
    eap = fitted.posterior_ @ fitted.grid_.points
    assert np.corrcoef(eap, theta)[0, 1] > 0.98
    assert np.corrcoef(fitted.params_.b, params.b)[0, 1] > 0.8
    assert np.all((fitted.params_.c > 0) & (fitted.params_.c < 0.5))


def test_long_tests_do_not_shrink_slopes() -> None:
    # 1,000 subjects x 1,500 items: posteriors far narrower than the grid spacing. A plain
    # grid E-step shrinks every slope here (by ~10%); the fit must stay unbiased.
    rng = np.random.default_rng(13)
    params = random_params(1500, rng, "2pl")
    theta = rng.normal(size=1000)
    data = simulate_responses(params, theta, rng)
    fitted = EMCalibrator("2pl", priors=ItemPriors.none()).fit(data)
    # The latent scale is the sample's: slopes come out multiplied by its SD.
    ratio = float(np.median(fitted.params_.a / params.a)) / float(np.std(theta))
    assert abs(ratio - 1) < 0.02
    assert np.corrcoef(fitted.params_.b, params.b)[0, 1] > 0.99


def test_one_pl_recovers_the_common_slope() -> None:
    rng = np.random.default_rng(14)
    params = ItemParams.create(np.full(20, 1.4), rng.normal(size=20), model="1pl")
    data = simulate_responses(params, rng.normal(size=3000), rng)
    fitted = EMCalibrator("1pl").fit(data)
    assert np.ptp(fitted.params_.a) == 0
    assert fitted.params_.a[0] == pytest.approx(1.4, abs=0.08)
    assert np.corrcoef(fitted.params_.b, params.b)[0, 1] > 0.99


def test_four_pl_estimates_an_upper_asymptote() -> None:
    rng = np.random.default_rng(15)
    params = ItemParams.create(
        rng.lognormal(0.3, 0.2, 30),
        rng.normal(size=30),
        np.full(30, 0.1),
        np.full(30, 0.85),
        model="4pl",
    )
    data = simulate_responses(params, rng.normal(size=4000), rng)
    fitted = EMCalibrator("4pl").fit(data)
    assert np.all(fitted.params_.d < 1)
    assert float(np.median(fitted.params_.d)) == pytest.approx(0.85, abs=0.06)


def test_missing_answers_are_masked_not_scored_wrong() -> None:
    rng = np.random.default_rng(16)
    params = random_params(30, rng, "2pl")
    data = simulate_responses(params, rng.normal(size=1500), rng, missing_rate=0.3)
    fitted = EMCalibrator("2pl").fit(data)
    # Scoring missing answers as wrong would make every item look ~0.3 harder in P.
    assert abs(float(np.mean(fitted.params_.b - params.b))) < 0.15
    assert np.corrcoef(fitted.params_.b, params.b)[0, 1] > 0.97


def test_standard_errors_match_the_spread_over_replications() -> None:
    rng = np.random.default_rng(17)
    params = random_params(10, rng, "2pl")
    estimates, errors = [], []
    for _ in range(25):
        data = simulate_responses(params, rng.normal(size=500), rng)
        fit = EMCalibrator("2pl", priors=ItemPriors.none()).fit(data)
        estimates.append(fit.params_.b)
        errors.append(fit.params_.se_b)
    spread = np.std(estimates, axis=0, ddof=1)
    reported = np.mean(errors, axis=0)
    ratio = float(np.median(reported / spread))
    assert 0.75 < ratio < 1.33


def test_three_pl_standard_errors_are_finite_and_positive() -> None:
    rng = np.random.default_rng(18)
    params = random_params(40, rng, "3pl")
    fitted = EMCalibrator("3pl").fit(simulate_responses(params, rng.normal(size=1500), rng))
    for se in (fitted.params_.se_a, fitted.params_.se_b, fitted.params_.se_c):
        assert se is not None
        assert np.all(np.isfinite(se)) and np.all(se > 0)


def test_iteration_cap_warns() -> None:
    rng = np.random.default_rng(19)
    params = random_params(20, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=500), rng)
    with pytest.warns(ConvergenceWarning, match="cap of 2 cycles"):
        fitted = EMCalibrator("3pl", max_iter=2).fit(data)
    assert not fitted.converged_
    assert fitted.n_iter_ == 2


def test_default_priors_are_on_for_3pl_and_recorded() -> None:
    rng = np.random.default_rng(20)
    params = random_params(10, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=300), rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = EMCalibrator("3pl", max_iter=50).fit(data)
    assert set(fitted.priors_.describe()) == {"a", "b", "c"}
    assert EMCalibrator("2pl").fit(data).priors_.describe() == {}


def test_items_everyone_got_right_stay_finite() -> None:
    values = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1], [1, 0, 0]] * 25)
    data = ResponseMatrix.from_array(values)
    fitted = EMCalibrator("3pl").fit(data)
    assert np.all(np.isfinite(fitted.params_.b))
    assert fitted.params_.b[0] < fitted.params_.b[1]
    assert ModelKind("3pl") is fitted.params_.model


def test_unidentified_difficulties_are_bounded_with_a_warning() -> None:
    # One subject: a 2PL without priors cannot tell a slope from zero.
    data = ResponseMatrix.from_array([[1, 0, 1, 1, 0]])
    with pytest.warns(DataWarning, match="not identified"):
        fitted = EMCalibrator("2pl").fit(data)
    assert np.all(np.abs(fitted.params_.b) <= 50)
    assert np.isfinite(fitted.loglik_)


def test_reported_loglik_is_exact_for_long_tests() -> None:
    # 60 subjects x 2,000 items: every posterior is narrower than the 61-point grid. A
    # 4,001-point grid resolves them all, so its plain sum is the reference.
    rng = np.random.default_rng(21)
    params = random_params(2000, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=60), rng, missing_rate=0.05)
    fitted = EMCalibrator("3pl").fit(data)
    reference = marginal_log_likelihood(data, fitted.params_, normal_grid(4001))
    assert fitted.loglik_ == pytest.approx(reference, abs=0.2)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "responses.jsonl"


def test_a_fit_under_priors_ends_at_its_posterior_mode_along_the_scale() -> None:
    # The parameter-expansion step rescales the items, which keeps the likelihood but
    # not a prior on a or b: with it, this fit ended 15 log-posterior units below a
    # mere rescaling of itself (a x 0.9, b / 0.9).
    from irt.mstep import MStepSpec, from_abcd, log_prior

    responses = read_responses(EXAMPLE)
    fit = EMCalibrator("3pl").fit(responses)
    assert fit.converged_
    params = fit.params_
    spec = MStepSpec(fit.model, fit.priors_, fit.grid_.points)

    def log_posterior(p: ItemParams) -> float:
        coords = from_abcd(p.a, p.b, p.c, p.d, spec)
        prior = float(log_prior(coords, spec).sum())
        return marginal_log_likelihood(responses, p, fit.grid_) + prior

    assert log_posterior(params) == pytest.approx(fit.logpost_)
    for scale in (0.9, 0.97, 1.03, 1.1):
        rescaled = ItemParams(
            params.item_ids, params.a * scale, params.b / scale, params.c, params.d, params.model
        )
        assert log_posterior(rescaled) < fit.logpost_
