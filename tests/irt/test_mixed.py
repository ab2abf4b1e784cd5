"""Mixed pools (``irt.mixed``, ``irt.mixed_em``): discrete and continuous items on one θ
by one EM."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy.special import logsumexp

from irt.continuous import ContinuousParams
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.errors import IRTError, ParamsError, ResponseDataError
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.polytomous import PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.quadrature import normal_grid

# --- simulation --------------------------------------------------------------------------


def _discrete_pool(
    n_graded: int, n_binary: int, rng: np.random.Generator, n_3pl: int = 0
) -> PolytomousParams:
    types = ["graded"] * n_graded + ["2PL"] * n_binary + ["3PL"] * n_3pl
    n = len(types)
    a = rng.uniform(0.7, 2.2, n)
    d: list[list[float]] = []
    for t in types:
        if t == "graded":
            d.append(sorted(rng.normal(0.0, 1.2, 3).tolist(), reverse=True))
        else:
            d.append([float(rng.normal(0.0, 1.0))])
    c = [0.2 if t == "3PL" else 0.0 for t in types]
    return PolytomousParams.create(types, a, d, c, item_ids=[f"q{j:03d}" for j in range(n)])


def _continuous_pool(n_crm: int, n_beta: int, rng: np.random.Generator) -> ContinuousParams:
    types = ["crm"] * n_crm + ["beta"] * n_beta
    a = rng.lognormal(0.0, 0.3, len(types))
    d = rng.normal(0.0, 1.0, len(types))
    disp = np.concatenate([rng.uniform(0.5, 1.2, n_crm), rng.uniform(1.0, 4.0, n_beta)])
    ids = [f"x{j:03d}" for j in range(len(types))]
    return ContinuousParams.create(types, a, d, disp, item_ids=ids)


def _simulate(
    params: MixedParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> tuple[MixedResponses, np.ndarray]:
    theta = rng.normal(size=n)
    subjects = [f"s{k:05d}" for k in range(n)]
    disc = cont = None
    if params.discrete is not None:
        p = params.discrete
        prob = p.probabilities(theta)
        scores = (prob.cumsum(axis=-1) < rng.random((n, p.n_items, 1))).sum(axis=-1)
        scores[rng.random(scores.shape) < missing] = MISSING
        disc = PolytomousResponses.from_array(
            scores,
            item_ids=p.item_ids,
            subject_ids=subjects,
            n_categories=p.n_categories.tolist(),
        )
    if params.continuous is not None:
        x = params.continuous.simulate(theta, rng)
        x[rng.random(x.shape) < missing] = np.nan
        cont = ContinuousResponses.from_array(
            x, item_ids=params.continuous.item_ids, subject_ids=subjects
        )
    return MixedResponses(disc, cont), theta


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert text and "\n" not in text
    return text


def _types(params: ContinuousParams) -> list[str]:
    return [t.value for t in params.item_types]


# --- one family alone is that family's calibrator ---------------------------------------


def test_discrete_part_alone_matches_the_polytomous_calibrator() -> None:
    rng = np.random.default_rng(11)
    true = MixedParams(discrete=_discrete_pool(4, 3, rng, n_3pl=1))
    responses, _ = _simulate(true, 600, rng, missing=0.05)
    assert responses.discrete is not None
    types = [t.value for t in true.discrete.item_types]  # type: ignore[union-attr]
    ref = PolytomousCalibrator(types, tol=1e-6, standard_errors=None).fit(responses.discrete)
    fit = MixedCalibrator(types, tol=1e-6).fit(responses)
    got = fit.params_.discrete
    assert got is not None and fit.params_.continuous is None
    np.testing.assert_allclose(got.a, ref.params_.a, atol=1e-3)
    np.testing.assert_allclose(got.d, ref.params_.d, atol=1e-3)
    np.testing.assert_allclose(got.c, ref.params_.c, atol=1e-3)
    assert fit.loglik_ == pytest.approx(ref.loglik_, abs=1e-3)
    assert fit.logpost_ == pytest.approx(ref.logpost_, abs=1e-3)
    assert fit.n_parameters_ == ref.n_parameters_
    assert fit.aic_ == pytest.approx(ref.aic_, abs=1e-2)
    assert fit.bic_ == pytest.approx(ref.bic_, abs=1e-2)
    assert fit.converged_


def test_continuous_part_alone_matches_the_continuous_calibrator() -> None:
    rng = np.random.default_rng(12)
    true = MixedParams(continuous=_continuous_pool(4, 4, rng))
    responses, _ = _simulate(true, 500, rng, missing=0.05)
    assert responses.continuous is not None and true.continuous is not None
    types = _types(true.continuous)
    ref = ContinuousCalibrator(types, tol=1e-6, standard_errors=None).fit(responses.continuous)
    fit = MixedCalibrator(continuous_types=types, tol=1e-6).fit(responses)
    got = fit.params_.continuous
    assert got is not None and fit.params_.discrete is None
    for name in ("a", "d", "sigma", "tau"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref.params_, name), atol=1e-3)
    assert fit.loglik_ == pytest.approx(ref.loglik_, abs=1e-3)
    assert fit.n_parameters_ == ref.n_parameters_
    assert fit.bic_ == pytest.approx(ref.bic_, abs=1e-2)


# --- a mixed pool ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_fit() -> tuple[MixedParams, MixedResponses, MixedCalibrator, np.ndarray]:
    rng = np.random.default_rng(2024)
    true = MixedParams(
        discrete=_discrete_pool(20, 20, rng), continuous=_continuous_pool(10, 10, rng)
    )
    responses, theta = _simulate(true, 1500, rng, missing=0.05)
    assert true.continuous is not None
    fit = MixedCalibrator(continuous_types=_types(true.continuous)).fit(responses)
    return true, responses, fit, theta


def test_recovery_of_each_family(
    mixed_fit: tuple[MixedParams, MixedResponses, MixedCalibrator, np.ndarray],
) -> None:
    true, _, fit, _ = mixed_fit
    assert fit.converged_
    assert fit.params_.item_ids == true.item_ids
    td, fd = true.discrete, fit.params_.discrete
    tc, fc = true.continuous, fit.params_.continuous
    assert td is not None and fd is not None and tc is not None and fc is not None
    graded = np.arange(20)
    binary = np.arange(20, 40)
    r_graded = np.corrcoef(td.a[graded], fd.a[graded])[0, 1]
    r_binary = np.corrcoef(td.a[binary], fd.a[binary])[0, 1]
    r_cont = np.corrcoef(tc.a, fc.a)[0, 1]
    assert min(r_graded, r_binary, r_cont) > 0.95, (r_graded, r_binary, r_cont)
    # Intercepts and dispersions too.
    assert np.corrcoef(td.d[:, 0], fd.d[:, 0])[0, 1] > 0.98
    assert np.corrcoef(tc.d, fc.d)[0, 1] > 0.98
    crm = tc.is_crm
    assert np.corrcoef(tc.sigma[crm], fc.sigma[crm])[0, 1] > 0.9
    assert np.corrcoef(tc.tau[~crm], fc.tau[~crm])[0, 1] > 0.9
    assert fit.n_parameters_ == 20 * 4 + 20 * 2 + 20 * 3
    n = 1500
    assert fit.aic_ == pytest.approx(-2 * fit.loglik_ + 2 * fit.n_parameters_)
    assert fit.bic_ == pytest.approx(-2 * fit.loglik_ + fit.n_parameters_ * np.log(n))
    described = fit.describe()
    assert described["item_types"] == {"2PL": 20, "beta": 10, "crm": 10, "graded": 20}


def test_joint_loglik_is_the_marginal_of_the_product_by_brute_force(
    mixed_fit: tuple[MixedParams, MixedResponses, MixedCalibrator, np.ndarray],
) -> None:
    """Σ_n log Σ_q w_q Π_j P_j(y_nj | θ_q) Π_j f_j(x_nj | θ_q), evaluated node by node
    from the items' own densities, is the fit's loglik_ — and it is not the sum of the
    two parts' separate marginals."""
    _, responses, fit, _ = mixed_fit
    pd, pc = fit.params_.discrete, fit.params_.continuous
    rd, rc = responses.discrete, responses.continuous
    assert pd is not None and pc is not None and rd is not None and rc is not None
    grid = normal_grid(61, 6.0)
    n = responses.n_subjects
    y = rd.values.astype(int)
    obs = y != MISSING
    rows, cols = np.nonzero(obs)
    per_node_d = np.zeros((grid.size, n))
    per_node_c = np.zeros((grid.size, n))
    log_p = pd.log_probs(grid.points)  # (Q, J, K)
    for q, th in enumerate(grid.points):
        contrib = np.zeros(y.shape)
        contrib[rows, cols] = log_p[q, cols, y[rows, cols]]
        per_node_d[q] = contrib.sum(axis=1)
        per_node_c[q] = np.nansum(pc.log_density(np.full(n, th), rc.values), axis=1)
    w = grid.log_weights[:, None]
    joint = float(logsumexp(w + per_node_d + per_node_c, axis=0).sum())
    separate = float(logsumexp(w + per_node_d, axis=0).sum())
    separate += float(logsumexp(w + per_node_c, axis=0).sum())
    assert fit.loglik_ == pytest.approx(joint, abs=1e-6 * abs(joint))
    assert abs(joint - separate) > 100  # one θ ties the parts together


def test_a_fit_started_at_its_estimates_stays_there(
    mixed_fit: tuple[MixedParams, MixedResponses, MixedCalibrator, np.ndarray],
) -> None:
    _, responses, fit, _ = mixed_fit
    assert fit.params_.continuous is not None
    again = MixedCalibrator(continuous_types=_types(fit.params_.continuous)).fit(
        responses, start=fit.params_
    )
    assert again.converged_ and again.n_iter_ <= 10
    assert again.loglik_ == pytest.approx(fit.loglik_, abs=0.05)
    assert again.params_.discrete is not None and fit.params_.discrete is not None
    np.testing.assert_allclose(again.params_.discrete.a, fit.params_.discrete.a, atol=5e-3)


def test_em_never_lowers_the_log_posterior() -> None:
    rng = np.random.default_rng(5)
    true = MixedParams(
        discrete=_discrete_pool(3, 3, rng, n_3pl=2), continuous=_continuous_pool(3, 3, rng)
    )
    responses, _ = _simulate(true, 400, rng, missing=0.1)
    assert true.continuous is not None
    types = _types(true.continuous)
    for squarem in (False, True):
        fit = MixedCalibrator(
            continuous_types=types,
            discrete_types=[t.value for t in true.discrete.item_types],  # type: ignore[union-attr]
            continuous_priors=ContinuousPriors.weakly_informative(),
            squarem=squarem,
            tol=1e-5,
        ).fit(responses)
        trace = np.array(fit.trace_)
        assert trace.size > 5
        assert np.all(np.diff(trace) >= -1e-8 * np.abs(trace[1:])), np.diff(trace).min()
        assert fit.logpost_ == pytest.approx(trace[-1], abs=1e-8)
        assert fit.logpost_ < fit.loglik_  # the priors are proper and add a negative term


def test_subset_and_ids() -> None:
    rng = np.random.default_rng(1)
    params = MixedParams(discrete=_discrete_pool(2, 2, rng), continuous=_continuous_pool(2, 1, rng))
    assert params.n_items == 7
    assert params.item_ids == ("q000", "q001", "q002", "q003", "x000", "x001", "x002")
    assert params.is_continuous.tolist() == [False] * 4 + [True] * 3
    sub = params.subset(["x002", "q003", "x000"])
    assert sub.item_ids == ("q003", "x002", "x000")
    only = params.subset("x001")
    assert only.discrete is None and only.item_ids == ("x001",)
    with pytest.raises(ParamsError) as exc:
        params.subset(["nope"])
    assert "nope" in _one_line(exc)


# --- bad input ---------------------------------------------------------------------------


def _bad_responses() -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(3)
    params = MixedParams(discrete=_discrete_pool(2, 2, rng), continuous=_continuous_pool(2, 0, rng))
    responses, _ = _simulate(params, 50, rng)
    rd, rc = responses.discrete, responses.continuous
    assert rd is not None and rc is not None
    clash = PolytomousParams.create("2PL", [1.0], [[0.0]], item_ids=["x000"])
    return {
        "other subjects": lambda: MixedResponses(rd, rc.subset(subjects=np.arange(49))),
        "reordered subjects": lambda: MixedResponses(rd, rc.subset(subjects=np.arange(50)[::-1])),
        "item in both (responses)": lambda: MixedResponses(
            rd,
            ContinuousResponses.from_array(
                rc.values, item_ids=["x000", "q001"], subject_ids=rc.subject_ids
            ),
        ),
        "item in both (params)": lambda: MixedParams(clash, params.continuous),
        "empty": lambda: MixedResponses(None, None),
        "no continuous types": lambda: MixedCalibrator().fit(responses),
        "standard errors": lambda: MixedCalibrator(standard_errors="oakes"),
        "not mixed": lambda: MixedCalibrator().fit(rd),  # type: ignore[arg-type]
    }


_WORDS = {
    "other subjects": (ResponseDataError, "same subjects"),
    "reordered subjects": (ResponseDataError, "same order"),
    "item in both (responses)": (ResponseDataError, "'q001' is in both"),
    "item in both (params)": (ParamsError, "'x000' is in both"),
    "empty": (ResponseDataError, "need a discrete part"),
    "no continuous types": (IRTError, "continuous_types"),
    "standard errors": (IRTError, "not implemented"),
    "not mixed": (IRTError, "MixedResponses"),
}


@pytest.mark.parametrize("case", list(_WORDS))
def test_bad_input_is_refused_in_one_line(case: str) -> None:
    call = _bad_responses()[case]
    error, words = _WORDS[case]
    with pytest.raises(error) as exc:
        call()
    assert words in _one_line(exc)
