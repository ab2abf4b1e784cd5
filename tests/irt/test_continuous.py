"""Continuous-response items (``irt.continuous``, ``irt.continuous_em``): Samejima's CRM
and the Beta IRT model — densities, Fisher information, EM calibration (recovery, the
log posterior never falling, the optimum above the truth), standard errors, priors,
EAP scores and bad input."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import digamma, expit, logit

from irt.continuous import ContinuousParams, ContinuousType
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_estep import ScoreData, continuous_log_likelihood, params_internal
from irt.continuous_kernels import beta_information, beta_shapes
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_scoring import continuous_scores
from irt.continuous_se import MarginalLogPosterior, continuous_standard_errors
from irt.errors import IRTError, ParamsError, ResponseDataError
from irt.quadrature import normal_grid

# One item of each model, shapes m, n ≥ 1.2 over θ ∈ [−1, 1] (a density bounded at 0
# and 1, so that clipping at ε = 1e-12 moves no visible mass).
MIXED = ContinuousParams.create(
    ["crm", "beta", "crm", "beta"],
    a=[1.2, 0.8, 0.5, 1.5],
    d=[-0.3, 0.2, 1.0, -0.4],
    dispersion=[0.7, 2.5, 1.3, 3.0],
    epsilon=1e-12,
)


def _pool(kind: str, n_items: int, rng: np.random.Generator) -> ContinuousParams:
    a = rng.lognormal(0.0, 0.3, n_items)
    d = rng.normal(0.0, 1.0, n_items)
    disp = rng.uniform(0.5, 1.2, n_items) if kind == "crm" else rng.uniform(1.0, 4.0, n_items)
    return ContinuousParams.create(kind, a, d, disp)


def _simulate(
    params: ContinuousParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> tuple[ContinuousResponses, np.ndarray]:
    theta = rng.normal(size=n)
    x = params.simulate(theta, rng)
    x[rng.random(x.shape) < missing] = np.nan
    return ContinuousResponses.from_array(x, item_ids=params.item_ids), theta


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text
    return text


# --- densities and information -----------------------------------------------------------


@pytest.mark.parametrize("theta", [-1.0, 0.0, 0.7])
def test_densities_integrate_to_one(theta: float) -> None:
    for j in range(MIXED.n_items):

        def density(x: float, j: int = j) -> float:
            return float(np.exp(MIXED.log_density([theta], [x], items=[j])[0]))

        total, _ = integrate.quad(density, 0.0, 1.0, limit=200, epsabs=1e-11)
        assert total == pytest.approx(1.0, abs=1e-7)


def test_densities_are_the_normal_on_the_logit_scale_and_the_beta() -> None:
    """CRM: log f(x) = log φ(y; aθ + d, σ) − log(x(1 − x)); Beta: scipy's Beta(m, n),
    shapes below 1 included."""
    x = np.array([0.001, 0.02, 0.3, 0.5, 0.93, 0.999])
    theta = np.array([-2.0, 0.4, 1.5])
    params = ContinuousParams.create(["crm", "beta"], [1.3, 2.0], [0.5, -1.0], [0.8, -1.5])
    for k, th in enumerate(theta):
        crm = params.log_density(np.full(x.size, th), x, items=np.zeros(x.size, dtype=int))
        want = stats.norm.logpdf(logit(x), 1.3 * th + 0.5, 0.8) - np.log(x * (1 - x))
        np.testing.assert_allclose(crm, want, rtol=1e-12)
        m, n = beta_shapes(np.array(2.0 * th - 1.0), np.array(-1.5))
        beta = params.log_density(np.full(x.size, th), x, items=np.ones(x.size, dtype=int))
        np.testing.assert_allclose(beta, stats.beta.logpdf(x, m, n), rtol=1e-10)
        grid = params.log_density(theta, np.array([x[k], x[k]]))
        np.testing.assert_allclose(grid[k], [crm[k], beta[k]], rtol=1e-12)
    assert m > 1 > n  # at θ = 1.5: shapes on both sides of 1


def _score(params: ContinuousParams, j: int, theta: float, x: np.ndarray) -> np.ndarray:
    """∂ log f_j(x | θ)/∂θ by central differences."""
    h = 1e-5
    items = np.full(x.size, j)
    up = params.log_density(np.full(x.size, theta + h), x, items=items)
    down = params.log_density(np.full(x.size, theta - h), x, items=items)
    return np.asarray((up - down) / (2 * h))


@pytest.mark.parametrize("theta", [-1.0, 0.3, 1.0])
def test_information_is_the_expected_squared_score(theta: float) -> None:
    """I_j(θ) = ∫ (∂ log f/∂θ)² f dx, the score by finite differences, by quadrature
    over x and by Monte Carlo of draws from the model."""
    info = MIXED.information([theta])[0]
    np.testing.assert_allclose(info[[0, 2]], (MIXED.a**2 / MIXED.sigma**2)[[0, 2]])
    rng = np.random.default_rng(3)
    draws = MIXED.simulate(np.full(100_000, theta), rng)
    for j in range(MIXED.n_items):

        def integrand(x: float, j: int = j) -> float:
            s = _score(MIXED, j, theta, np.array([x]))[0]
            return float(s**2 * np.exp(MIXED.log_density([theta], [x], items=[j])[0]))

        by_quad, _ = integrate.quad(integrand, 0.0, 1.0, limit=200)
        assert by_quad == pytest.approx(info[j], rel=1e-5)
        sq = _score(MIXED, j, theta, draws[:, j]) ** 2
        assert abs(sq.mean() - info[j]) < 4 * sq.std() / np.sqrt(sq.size)


def test_beta_information_at_extreme_shapes_by_monte_carlo() -> None:
    """Shapes far below and far above 1 (a skewed item with a lump near 0)."""
    params = ContinuousParams.create("beta", [2.0], [-1.0], [-2.0])
    rng = np.random.default_rng(4)
    for theta in (-1.5, 0.0, 2.0):
        m, n = beta_shapes(np.array(2.0 * theta - 1.0), np.array(-2.0))
        # x = G_m/(G_m + G_n) in log space, log G_m = log G_{m+1} + log(U)/m (Marsaglia &
        # Tsang 2000), so that shapes far below 1 lose no draws to underflow.
        log_gm = np.log(rng.gamma(m + 1, size=200_000)) + np.log(rng.random(200_000)) / m
        log_gn = np.log(rng.gamma(n + 1, size=200_000)) + np.log(rng.random(200_000)) / n
        log_x = log_gm - np.logaddexp(log_gm, log_gn)
        log_1mx = log_gn - np.logaddexp(log_gm, log_gn)
        # The score a[(m/2)(log x − ψ(m)) − (n/2)(log(1 − x) − ψ(n)) + ψ(m + n)(m − n)/2].
        score = 2.0 * (
            m / 2 * (log_x - digamma(m))
            - n / 2 * (log_1mx - digamma(n))
            + digamma(m + n) * (m - n) / 2
        )
        sq = score**2
        info = params.information([theta])[0, 0]
        assert abs(score.mean()) < 4 * score.std() / np.sqrt(score.size)
        assert abs(sq.mean() - info) < 4 * sq.std() / np.sqrt(sq.size)


def test_beta_information_is_stable_for_large_shapes() -> None:
    """The cancellation-free form equals the textbook one for moderate shapes and stays
    finite and positive where that one loses every digit (shapes beyond ~1e8)."""
    from scipy.special import polygamma

    m, n = np.meshgrid(np.logspace(-6, 4, 11), np.logspace(-6, 4, 11))
    tm, tn, ts = m**2 * polygamma(1, m), n**2 * polygamma(1, n), polygamma(1, m + n)
    textbook = (
        (tm + tn - (m - n) ** 2 * ts) / 4,
        (tm - tn - (m**2 - n**2) * ts) / 4,
        (tm + tn - (m + n) ** 2 * ts) / 4,
    )
    for ours, want in zip(beta_information(m, n), textbook, strict=True):
        np.testing.assert_allclose(ours, want, rtol=1e-9, atol=1e-12)
    huge = beta_information(np.array([1e40, 1e12]), np.array([1e-8, 1e12]))
    np.testing.assert_allclose(huge[0], [0.25, 0.5e12], rtol=1e-6)
    assert np.all(huge[2] > 0)


def test_expected_score_by_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    for theta in (-1.0, 0.5):
        draws = MIXED.simulate(np.full(100_000, theta), rng)
        want = MIXED.expected([theta])[0]
        np.testing.assert_allclose(draws.mean(axis=0), want, atol=4e-3)
    beta = ~MIXED.is_crm
    np.testing.assert_allclose(
        MIXED.expected([0.5])[0, beta], expit(0.5 * MIXED.a + MIXED.d)[beta], rtol=1e-12
    )


def test_subset_and_pairs() -> None:
    sub = MIXED.subset(["i0003", "i0000"])
    assert sub.item_ids == ("i0003", "i0000")
    assert [t.value for t in sub.item_types] == ["beta", "crm"]
    assert sub.epsilon == MIXED.epsilon
    x = np.array([0.4, 0.2])
    np.testing.assert_allclose(
        sub.log_density([0.3], x)[0], MIXED.log_density([0.3, 0.3], x, items=[3, 0])
    )
    np.testing.assert_allclose(MIXED.subset(np.array([1, 2])).a, MIXED.a[1:3])


# --- calibration -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["crm", "beta"])
def test_recovery_on_1000_by_30(kind: str) -> None:
    rng = np.random.default_rng(11 if kind == "crm" else 12)
    truth = _pool(kind, 30, rng)
    data, theta = _simulate(truth, 1000, rng, missing=0.1)
    fit = ContinuousCalibrator(kind, standard_errors=None).fit(data)
    p = fit.params_
    assert fit.converged_
    assert np.corrcoef(p.a, truth.a)[0, 1] > 0.95
    assert np.corrcoef(p.d, truth.d)[0, 1] > 0.98
    disp, true_disp = p.dispersion, truth.dispersion
    assert np.corrcoef(disp, true_disp)[0, 1] > 0.95
    assert np.abs(disp - true_disp).mean() < (0.03 if kind == "crm" else 0.1)
    # The optimum is at least as likely as the truth.
    assert fit.loglik_ >= continuous_log_likelihood(data, truth) - 1e-6
    assert fit.loglik_ == pytest.approx(continuous_log_likelihood(data, p), abs=1e-6)
    scores = continuous_scores(data, p)
    assert np.corrcoef(scores.theta, theta)[0, 1] > 0.95


def test_em_never_lowers_the_log_posterior() -> None:
    """Plain and SQUAREM cycles, without and with priors, on a mixed pool with missing
    answers and lumps at 0 and 1."""
    rng = np.random.default_rng(21)
    truth = ContinuousParams.create(
        ["crm", "beta"] * 6,
        rng.lognormal(0.0, 0.3, 12),
        rng.normal(0.0, 1.5, 12),
        np.tile([0.9, 1.0], 6),
    )
    data, _ = _simulate(truth, 400, rng, missing=0.2)
    values = np.array(data.values)
    values[rng.random(values.shape) < 0.05] = 0.0
    values[rng.random(values.shape) < 0.05] = 1.0
    data = ContinuousResponses.from_array(values)
    for priors in (None, ContinuousPriors.weakly_informative()):
        for squarem in (False, True):
            fit = ContinuousCalibrator(
                ["crm", "beta"] * 6, priors=priors, squarem=squarem, standard_errors=None
            ).fit(data)
            trace = np.asarray(fit.trace_)
            assert fit.converged_
            assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[1:]))
            assert trace[-1] == pytest.approx(fit.logpost_, abs=1e-8)
    assert fit.n_clipped_ == int(((values < 1e-3) | (values > 1 - 1e-3)).sum())
    assert fit.epsilon_ == fit.params_.epsilon == 1e-3


def test_map_beats_ml_estimates_on_the_log_posterior() -> None:
    rng = np.random.default_rng(22)
    truth = _pool("crm", 8, rng)
    data, _ = _simulate(truth, 60, rng)
    priors = ContinuousPriors.weakly_informative()
    ml = ContinuousCalibrator("crm", standard_errors=None).fit(data)
    bayes = ContinuousCalibrator("crm", priors=priors, standard_errors=None).fit(data)
    grid = normal_grid()
    objective = MarginalLogPosterior(
        ScoreData.of(data, ml.params_.is_crm, 1e-3), grid.points, grid.log_weights, priors
    )
    assert bayes.logpost_ >= objective.value(params_internal(ml.params_).ravel()) - 1e-8
    assert ml.logpost_ == pytest.approx(ml.loglik_)
    assert bayes.loglik_ <= ml.loglik_ + 1e-8


def test_gradient_is_the_derivative_of_the_log_posterior() -> None:
    """Fisher's identity against central differences of the marginal log posterior."""
    rng = np.random.default_rng(23)
    truth = MIXED.subset([0, 1, 2, 3])
    data, _ = _simulate(truth, 150, rng, missing=0.1)
    grid = normal_grid()
    objective = MarginalLogPosterior(
        ScoreData.of(data, truth.is_crm, 1e-3),
        grid.points,
        grid.log_weights,
        ContinuousPriors.weakly_informative(),
    )
    flat = params_internal(truth).ravel() + rng.normal(0, 0.1, 12)
    h = 1e-6
    numeric = np.array(
        [
            (objective.value(flat + h * e) - objective.value(flat - h * e)) / (2 * h)
            for e in np.eye(flat.size)
        ]
    )
    np.testing.assert_allclose(objective.gradient(flat), numeric, rtol=1e-5, atol=1e-5)


def test_standard_errors_match_the_spread_of_estimates() -> None:
    """Mixed pool: (estimate − truth)/SE has SD near 1 over items; the fit's errors are
    those of ``continuous_standard_errors`` at its parameters."""
    rng = np.random.default_rng(24)
    kinds = ["crm", "beta"] * 10
    truth = ContinuousParams.create(
        kinds,
        rng.lognormal(0.0, 0.3, 20),
        rng.normal(0.0, 1.0, 20),
        np.where(np.array(kinds) == "crm", 0.8, 2.0),
    )
    data, _ = _simulate(truth, 800, rng)
    fit = ContinuousCalibrator(kinds).fit(data)
    p = fit.params_
    assert p.se_a is not None and p.se_d is not None and fit.se_ is not None
    z = np.concatenate([(p.a - truth.a) / p.se_a, (p.d - truth.d) / p.se_d])
    assert 0.6 < z.std() < 1.5
    again = continuous_standard_errors(data, p)
    np.testing.assert_allclose(again.a, p.se_a, rtol=1e-4)
    assert p.se_tau is not None and p.se_sigma is not None
    assert np.isnan(p.se_tau[p.is_crm]).all() and np.isnan(p.se_sigma[~p.is_crm]).all()
    assert len(fit.se_.labels) == 60 and fit.se_.labels[2] == "i0000.log_sigma"


def test_information_criteria_and_description() -> None:
    rng = np.random.default_rng(25)
    truth = _pool("beta", 6, rng)
    data, _ = _simulate(truth, 200, rng)
    values = np.array(data.values)
    values[0] = np.nan  # a subject with no answers is not counted in the BIC's n
    data = ContinuousResponses.from_array(values)
    cal = ContinuousCalibrator("beta", priors=ContinuousPriors.weakly_informative())
    fit = cal.fit(data)
    assert fit.n_parameters_ == 18
    assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 36)
    assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + 18 * np.log(199))
    described = cal.describe()
    assert described["priors"]["tau"] == {"dist": "normal", "mean": 2.0, "sd": 2.0}
    assert described["priors"]["a"]["dist"] == "lognormal"
    assert described["epsilon"] == 1e-3 and described["item_types"] == {"beta": 6}
    assert ContinuousPriors().describe() == {}
    assert not continuous_scores(data, fit.params_).n_answered[0]


def test_clipping_makes_lumps_at_0_and_1_finite() -> None:
    x = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.2], [0.3, 0.7, 1.0], [0.0, 0.0, 0.9]] * 5)
    for kind in ("crm", "beta"):
        fit = ContinuousCalibrator(kind, epsilon=0.01).fit(x)
        assert np.isfinite(fit.loglik_) and fit.n_clipped_ == 35
        assert fit.params_.epsilon == 0.01
        assert np.isfinite(fit.params_.log_density([0.0], [0.0, 1.0, 0.0])).all()


# --- bad input ---------------------------------------------------------------------------

Bad = Callable[[], object]


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: ContinuousResponses.from_array([[0.2, 1.5]]), ResponseDataError, "[0, 1]"),
        (lambda: ContinuousResponses.from_array([[0.2, -0.1]]), ResponseDataError, "[0, 1]"),
        (lambda: ContinuousResponses.from_array([[0.2, np.inf]]), ResponseDataError, "[0, 1]"),
        (lambda: ContinuousResponses.from_array([[np.nan, np.nan]]), ResponseDataError, "no"),
        (lambda: ContinuousResponses.from_array([0.2, 0.3]), ResponseDataError, "2-D"),
        (lambda: ContinuousResponses.from_array([["a"]]), ResponseDataError, "numbers"),
        (
            lambda: ContinuousResponses.from_array([[0.2, 0.3]], item_ids=["x"]),
            ResponseDataError,
            "does not match",
        ),
        (
            lambda: ContinuousCalibrator("crm").fit([[0.2, np.nan]] * 5),
            ResponseDataError,
            "no answers",
        ),
        (
            lambda: ContinuousCalibrator("crm").fit([[0.2, 0.4], [0.1, np.nan]] * 1),
            ResponseDataError,
            "at least 3",
        ),
        (
            lambda: ContinuousCalibrator(["crm"]).fit([[0.2, 0.4]] * 5),
            IRTError,
            "1 item types for 2 items",
        ),
        (lambda: ContinuousCalibrator("gauss"), IRTError, "unknown item type"),
        (lambda: ContinuousCalibrator("crm", epsilon=0.7), ParamsError, "epsilon"),
        (lambda: ContinuousCalibrator("crm", standard_errors="xpd"), IRTError, "oakes"),
        (lambda: ContinuousParams.create("crm", [-1.0], [0.0], [1.0]), ParamsError, "positive"),
        (lambda: ContinuousParams.create("crm", [1.0], [0.0], [0.0]), ParamsError, "sigma"),
        (lambda: ContinuousParams.create("cr", [1.0], [0.0], [1.0]), ParamsError, "unknown"),
        (
            lambda: ContinuousParams.create("beta", [1.0, 1.0], [0.0], [1.0, 1.0]),
            ParamsError,
            "shape",
        ),
        (
            lambda: ContinuousParams(
                ("x",), (ContinuousType.CRM,), np.ones(1), np.zeros(1), np.ones(1), np.full(1, 2.0)
            ),
            ParamsError,
            "only beta items have tau",
        ),
        (lambda: MIXED.log_density([0.0], [0.2, 0.3]), ParamsError, "shape"),
        (lambda: MIXED.log_density([0.0], [0.2, 0.3, 2.0, 0.1]), ResponseDataError, "[0, 1]"),
        (lambda: ContinuousPriors(d_mean=0.0), IRTError, "both"),
        (lambda: ContinuousPriors(tau_mean=0.0, tau_sd=-1.0), IRTError, "positive"),
    ],
)
def test_bad_input_is_refused_in_one_line(call: Bad, error: type[Exception], words: str) -> None:
    with pytest.raises(error) as exc:
        call()
    assert words in _one_line(exc)


def test_fit_refuses_params_of_other_items() -> None:
    values = np.random.default_rng(26).random((5, 4))
    data = ContinuousResponses.from_array(values, item_ids=list("abcd"))
    with pytest.raises(IRTError) as exc:
        continuous_log_likelihood(data, MIXED)
    assert "same items" in _one_line(exc)
    with pytest.raises(IRTError) as exc:
        ContinuousCalibrator("crm").fit(data, start=MIXED)
    _one_line(exc)
