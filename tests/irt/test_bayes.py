"""Tests of irt.bayes.calibrator: Bayesian calibration with pyro (SVI and NUTS)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

from irt.bayes.calibrator import NUTS_MAX_OBSERVED, BayesCalibrator, proper_priors, svi_converged
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError
from irt.models import ItemParams, ModelKind
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from irt.types import FloatArray

pytest.importorskip("pyro")

Data = tuple[ItemParams, FloatArray, ResponseMatrix]


def _two_pl(n_subjects: int, n_items: int, seed: int, missing_rate: float = 0.0) -> Data:
    # Slopes spread wider than random_params' LogNormal(0, 0.3): with nearly equal
    # slopes their correlation with the truth measures noise, not recovery.
    rng = np.random.default_rng(seed)
    params = ItemParams.create(
        rng.lognormal(0.0, 0.5, n_items), rng.normal(0.0, 1.0, n_items), model="2pl"
    )
    theta = rng.normal(size=n_subjects)
    return params, theta, simulate_responses(params, theta, rng, missing_rate)


def _r(x: FloatArray, y: FloatArray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def _finite(fit: BayesCalibrator) -> bool:
    p = fit.params_
    arrays = [p.a, p.b, p.c, p.d, fit.theta_, fit.theta_se_]
    arrays += [x for x in (p.se_a, p.se_b, p.se_c) if x is not None]
    return all(np.all(np.isfinite(x)) for x in arrays) and bool(np.isfinite(fit.loglik_))


@pytest.fixture(scope="module")
def two_pl() -> Data:
    return _two_pl(500, 20, seed=4)


@pytest.fixture(scope="module")
def two_pl_fit(two_pl: Data) -> BayesCalibrator:
    return BayesCalibrator("2pl", n_steps=800, seed=0).fit(two_pl[2])


def test_svi_recovers_2pl(two_pl: Data, two_pl_fit: BayesCalibrator) -> None:
    truth, theta, responses = two_pl
    fit = two_pl_fit
    assert _r(fit.params_.a, truth.a) > 0.8
    assert _r(fit.params_.b, truth.b) > 0.95
    assert _r(fit.theta_, theta) > 0.85
    assert fit.converged_ and fit.method_ == "svi"
    assert fit.n_iter_ == len(fit.elbo_) == 800
    assert fit.elbo_[-1] > fit.elbo_[0]
    assert fit.params_.item_ids == responses.item_ids
    assert fit.params_.model is ModelKind.TWO_PL
    assert np.all(fit.params_.c == 0) and np.all(fit.params_.d == 1)
    assert fit.params_.se_c is None
    assert fit.params_.se_a is not None and np.all(fit.params_.se_a > 0)
    assert fit.theta_.shape == fit.theta_se_.shape == (500,)
    assert np.all(fit.theta_se_ > 0)


def test_loglik_matches_unpenalised_em(two_pl: Data, two_pl_fit: BayesCalibrator) -> None:
    em = EMCalibrator("2pl", priors=ItemPriors.none()).fit(two_pl[2])
    assert np.isfinite(two_pl_fit.loglik_)
    assert abs(two_pl_fit.loglik_ - em.loglik_) < 0.01 * abs(em.loglik_)
    # EM maximises the marginal likelihood, so the posterior medians cannot beat it.
    assert two_pl_fit.loglik_ <= em.loglik_ + 1e-3
    assert np.isfinite(two_pl_fit.logpost_) and two_pl_fit.logpost_ != two_pl_fit.loglik_


def test_3pl_guessing_stays_low_and_near_truth() -> None:
    rng = np.random.default_rng(0)
    truth = random_params(20, rng, "3pl")  # c ~ U(0, 0.25)
    responses = simulate_responses(truth, rng.normal(size=500), rng)
    fit = BayesCalibrator("3pl", n_steps=800, seed=0).fit(responses)
    assert np.all(fit.params_.c < 0.5)
    assert abs(fit.params_.c.mean() - truth.c.mean()) < 0.1
    assert fit.params_.se_c is not None and np.all(fit.params_.se_c > 0)
    assert _finite(fit)


def test_guessing_does_not_drift_to_one_on_near_all_correct_data() -> None:
    # py-irt's 3PL sends c towards 1 on data like these.
    rng = np.random.default_rng(7)
    values = np.ones((200, 20), dtype=np.int8)
    values[rng.random(values.shape) < 0.02] = 0
    responses = ResponseMatrix.from_array(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a, b have flat ridges here
        fit = BayesCalibrator("3pl", n_steps=800, seed=0).fit(responses)
        flat = BayesCalibrator(
            "3pl", n_steps=800, seed=0, priors=ItemPriors(c_alpha=1.0, c_beta=1.0)
        ).fit(responses)
    assert _finite(fit)
    assert np.all(fit.params_.c < 0.5)
    # The data do pull c up: a flat Beta(1, 1) prior lets it drift past 0.5.
    assert flat.params_.c.mean() > 0.5


def test_missing_responses_are_masked() -> None:
    truth, _, responses = _two_pl(500, 20, seed=5, missing_rate=0.2)
    assert 0.15 < 1 - responses.observed.mean() < 0.25
    fit = BayesCalibrator("2pl", n_steps=800, seed=0).fit(responses)
    assert _r(fit.params_.b, truth.b) > 0.9
    assert _finite(fit)


@pytest.mark.slow
def test_nuts_on_a_tiny_problem() -> None:
    _, _, responses = _two_pl(100, 5, seed=3)
    calls: list[int] = []
    fit = BayesCalibrator(
        "2pl",
        method="nuts",
        warmup_steps=100,
        num_samples=100,
        progress=lambda i, _v: calls.append(i),
    ).fit(responses)
    assert _finite(fit)
    assert fit.params_.se_a is not None and np.all(fit.params_.se_a > 0)
    assert fit.params_.se_b is not None and np.all(fit.params_.se_b > 0)
    assert np.isfinite(fit.r_hat_) and fit.converged_ == (fit.r_hat_ < 1.1)
    assert fit.method_ == "nuts" and fit.n_iter_ == 200 and len(calls) == 200


def test_same_seed_same_result_and_caller_rng_untouched() -> None:
    import torch

    _, _, responses = _two_pl(200, 10, seed=1)

    def fit(seed: int) -> BayesCalibrator:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return BayesCalibrator("2pl", n_steps=100, seed=seed).fit(responses)

    # pyro.set_rng_seed seeds numpy's legacy global generator; fit must hand it back.
    threads = torch.get_num_threads()
    np.random.seed(123)  # noqa: NPY002
    first = fit(3)
    after_fit = np.random.random()  # noqa: NPY002
    np.random.seed(123)  # noqa: NPY002
    assert after_fit == np.random.random()  # noqa: NPY002
    assert torch.get_num_threads() == threads
    second, other = fit(3), fit(4)
    for name in ("a", "b", "se_a", "se_b"):
        np.testing.assert_array_equal(getattr(first.params_, name), getattr(second.params_, name))
    np.testing.assert_array_equal(first.theta_, second.theta_)
    assert first.elbo_ == second.elbo_
    assert not np.array_equal(first.params_.a, other.params_.a)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": "5pl"},
        {"method": "hmc"},
        {"seed": -1},
        {"seed": 1.5},
        {"n_steps": 0},
        {"learning_rate": 0.0},
        {"learning_rate": float("nan")},
        {"num_samples": 2},
        {"warmup_steps": -1},
        {"priors": "default"},
        {"progress": 3},
    ],
)
def test_bad_settings_raise(kwargs: dict[str, Any]) -> None:
    with pytest.raises(IRTError):
        BayesCalibrator(**kwargs)


def test_nuts_refuses_large_problems() -> None:
    n_items = 200
    n_subjects = NUTS_MAX_OBSERVED // n_items + 1
    responses = ResponseMatrix.from_array(np.ones((n_subjects, n_items)))
    with pytest.raises(IRTError, match="svi"):
        BayesCalibrator("2pl", method="nuts").fit(responses)


def test_priors_are_always_proper() -> None:
    used = proper_priors(ItemPriors.none(), ModelKind.TWO_PL)
    assert used == ItemPriors(c_alpha=None, c_beta=None, d_alpha=None, d_beta=None)
    assert proper_priors(ItemPriors.none(), ModelKind.FOUR_PL) == ItemPriors()
    # The 1PL's shared slope keeps its prior, unlike in ItemPriors.for_model.
    assert proper_priors(None, ModelKind.ONE_PL).has_a


def test_svi_convergence_rule() -> None:
    assert svi_converged([-100.0] * 100)
    assert not svi_converged(list(np.linspace(-200.0, -100.0, 100)))
    assert not svi_converged([-100.0] * 99 + [float("nan")])


@pytest.mark.parametrize("model", ["1pl", "4pl"])
def test_other_models_run(model: str) -> None:
    _, _, responses = _two_pl(200, 8, seed=2)
    elbos: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = BayesCalibrator(
            model, n_steps=200, priors=ItemPriors.none(), progress=lambda _i, e: elbos.append(e)
        ).fit(responses)
    assert _finite(fit)
    assert elbos == fit.elbo_ and len(elbos) == 200
    assert fit.priors_.has_a and fit.priors_.has_b
    if model == "1pl":
        assert np.ptp(fit.params_.a) == 0 and not fit.priors_.has_c
    else:
        assert np.all(fit.params_.c < fit.params_.d) and np.all(fit.params_.d < 1)
        assert fit.priors_ == ItemPriors()


def test_missing_extra_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "irt.bayes.model", raising=False)
    monkeypatch.setitem(sys.modules, "pyro", None)
    monkeypatch.setitem(sys.modules, "torch", None)
    _, _, responses = _two_pl(20, 4, seed=0)
    with pytest.raises(IRTError, match=r"'bayes' extra") as info:
        BayesCalibrator("2pl").fit(responses)
    assert isinstance(info.value.__cause__, ImportError)


def test_module_import_does_not_load_torch() -> None:
    code = "import sys, irt.bayes.calibrator; assert not {'torch', 'pyro'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)
