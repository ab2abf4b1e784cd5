"""The adaptive test on mixed pools: scored items and continuous ones (CRM, Beta) on
one θ, through the score table, the estimators, every policy, simulation, replay and
the session."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import integrate

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.engine.continuous_rows import ContinuousRows, draw_continuous
from cat.engine.graded_estimators import GradedAnswers
from cat.engine.registry import POLICY_NAMES, make_graded_estimator, make_policy
from cat.engine.score_table import ScoreTable
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, draw_scores, replay_cat, simulate_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from irt.mixed import MixedParams, MixedResponses
from irt.polytomous_responses import PolytomousResponses
from tests.cat.engine.scored_pool import mixed_pool


def continuous_pool(n_items: int = 60, seed: int = 1, epsilon: float = 1e-3) -> ContinuousParams:
    """Half CRM, half Beta items, with ids c000…"""
    rng = np.random.default_rng(seed)
    types = ["crm", "beta"] * (n_items // 2)
    crm = np.array(types) == "crm"
    dispersion = np.where(crm, rng.uniform(0.6, 1.2, n_items), rng.uniform(1.0, 2.5, n_items))
    return ContinuousParams.create(
        types,
        rng.lognormal(-0.3, 0.3, n_items),
        rng.normal(0.0, 1.0, n_items),
        dispersion,
        item_ids=[f"c{j:03d}" for j in range(n_items)],
        epsilon=epsilon,
    )


def pool(n_scored: int = 60, n_continuous: int = 60) -> MixedParams:
    return MixedParams(mixed_pool(n_scored), continuous_pool(n_continuous))


def design(policy: str = "mfi", estimator: str = "eap", length: int = 30) -> CATDesign:
    return CATDesign(
        make_policy(policy, length, 5),
        make_graded_estimator(estimator),
        StoppingRule(max_items=length),
    )


def test_a_continuous_answer_adds_its_exact_log_density() -> None:
    params = pool()
    table = ScoreTable.build(params)
    rng = np.random.default_rng(3)
    items = rng.integers(60, 120, size=(40, 3))
    scores = rng.uniform(0.0, 1.0, size=(40, 3))
    scores[0, 0], scores[1, 1] = 0.0, 1.0  # clipped as the model clips them
    got = table.log_likelihood(items, scores, np.ones_like(items, dtype=bool))
    assert params.continuous is not None
    want = np.zeros_like(got)
    for k in range(3):
        dens = params.continuous.log_density(
            np.repeat(table.grid[None, :], 40, axis=0).ravel(),
            np.repeat(scores[:, k], table.grid.size),
            items=np.repeat(items[:, k] - 60, table.grid.size),
        )
        want += dens.reshape(40, -1)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)


def test_scored_and_continuous_answers_add_up() -> None:
    params = pool()
    table = ScoreTable.build(params)
    items = np.array([[3, 70, 5, 100]])
    scores = np.array([[1.0, 0.4, 0.0, 0.9]])
    given = np.array([[True, True, True, False]])
    both = table.log_likelihood(items, scores, given)
    scored = table.log_likelihood(items[:, [0, 2]], scores[:, [0, 2]], given[:, [0, 2]])
    continuous = table.log_likelihood(items[:, [1]], scores[:, [1]], given[:, [1]])
    np.testing.assert_allclose(both, scored + continuous, rtol=1e-12)


def test_the_table_holds_every_items_information() -> None:
    params = pool()
    table = ScoreTable.build(params)
    np.testing.assert_allclose(table.info[:-1].T, params.information(table.grid), rtol=1e-5)
    assert table.n_discrete == 60 and table.n_items == 120
    np.testing.assert_array_equal(table.max_scores[60:], 1.0)


def test_a_continuous_items_location_is_where_half_its_top_is_expected() -> None:
    params = pool()
    table = ScoreTable.build(params)
    assert params.continuous is not None
    at = table.locations[60:]
    np.testing.assert_allclose(np.diag(params.continuous.expected(at)), 0.5, atol=1e-9)


@pytest.mark.parametrize("j", [0, 1, 6, 7])
def test_the_kl_divergence_is_its_definition(j: int) -> None:
    # A Beta density with a shape below 1 has mass close to 0: integrate nearly all of it.
    cont = continuous_pool(8, epsilon=1e-12)
    rows = ContinuousRows.build(cont, np.linspace(-6, 6, 241), 0)
    theta, at = np.array([0.4]), np.array([-0.7])
    got = rows.kl(theta, at)[0, j]

    def integrand(x: float) -> float:
        f0 = np.exp(cont.log_density([theta[0]], [x], items=[j])[0])
        f1 = np.exp(cont.log_density([at[0]], [x], items=[j])[0])
        return float(f0 * np.log(f0 / f1)) if f0 > 0 else 0.0

    eps = cont.epsilon
    want, _ = integrate.quad(integrand, eps, 1 - eps, limit=200, points=[0.5])
    assert got == pytest.approx(want, rel=2e-3, abs=1e-6)
    assert rows.kl(theta, theta)[0, j] == pytest.approx(0.0, abs=1e-9)


def test_draws_have_the_models_mean_and_variance() -> None:
    cont = continuous_pool(4)
    rng = np.random.default_rng(5)
    theta = np.full(40_000, 0.3)
    for j in range(4):
        x = draw_continuous(cont, theta, np.full(theta.size, j), rng)
        assert x.mean() == pytest.approx(cont.expected([0.3])[0, j], abs=0.005)
        assert x.var() == pytest.approx(cont.variance([0.3])[0, j], rel=0.05)


@pytest.mark.parametrize("estimator", ["eap", "mle", "map"])
def test_mfi_on_a_mixed_pool_recovers_theta_with_honest_ses(estimator: str) -> None:
    theta = np.random.default_rng(7).normal(size=600)
    result = simulate_cat(pool(), theta, design(estimator=estimator), np.random.default_rng(8))
    rmse = float(np.sqrt(np.mean((result.theta_hat - theta) ** 2)))
    assert rmse < 0.3
    assert 0.8 < rmse / float(np.mean(result.se)) < 1.25
    assert np.all(np.isfinite(result.theta_hat))


def test_continuous_items_add_information_to_a_scored_pool() -> None:
    theta = np.random.default_rng(9).normal(size=600)
    rmse = {}
    for name, params in (("scored", MixedParams(mixed_pool(60))), ("mixed", pool())):
        result = simulate_cat(params, theta, design(length=20), np.random.default_rng(10))
        rmse[name] = float(np.sqrt(np.mean((result.theta_hat - theta) ** 2)))
    assert rmse["mixed"] < 0.9 * rmse["scored"]


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_every_policy_runs_on_a_mixed_pool(policy: str) -> None:
    theta = np.random.default_rng(11).normal(size=50)
    result = simulate_cat(pool(), theta, design(policy, length=15), np.random.default_rng(12))
    assert np.all(result.n_items == 15)
    for row in result.items:
        assert len(set(row.tolist())) == 15  # no item twice


def test_ml_needs_no_fallback_once_a_continuous_score_is_in() -> None:
    table = ScoreTable.build(pool())
    # All scored answers at their lowest: no ML; one continuous answer: ML exists.
    low = GradedAnswers(table, np.array([[0, 1, -1]]), np.array([[0.0, 0.0, 0.0]]))
    mixed = GradedAnswers(table, np.array([[0, 1, 70]]), np.array([[0.0, 0.0, 0.3]]))
    assert low.at_an_end()[0] and not mixed.at_an_end()[0]


def test_replay_uses_the_recorded_continuous_scores() -> None:
    params = pool(30, 30)
    rng = np.random.default_rng(13)
    theta = rng.normal(size=20)
    assert params.discrete is not None and params.continuous is not None
    subjects = [f"s{i}" for i in range(20)]
    disc_values = np.zeros((20, 30))
    for j in range(30):
        disc_values[:, j] = draw_scores(params.discrete, theta, np.full(20, j), rng)
    cont_values = params.continuous.simulate(theta, rng)
    cont_values[0, :10] = np.nan  # not answered: never asked
    responses = MixedResponses(
        PolytomousResponses.from_array(disc_values, subjects, params.discrete_ids),
        ContinuousResponses.from_array(cont_values, subjects, params.continuous_ids),
    )
    result = replay_cat(params, responses, design(length=40), np.random.default_rng(14))
    values = responses.as_float()
    for i in range(20):
        asked = result.items[i][result.items[i] >= 0]
        np.testing.assert_array_equal(result.right[i][: asked.size], values[i, asked])
    assert not set(result.items[0].tolist()) & set(range(30, 40))


def test_replay_refuses_scored_responses_on_a_mixed_pool() -> None:
    params = pool(30, 30)
    assert params.discrete is not None
    scored = PolytomousResponses.from_array(np.zeros((2, 30)), ["a", "b"], params.discrete_ids)
    with pytest.raises(CatError):
        replay_cat(params, scored, design(), np.random.default_rng(0))


def test_a_session_takes_continuous_scores_and_resumes_exactly() -> None:
    params = pool()
    config = SessionConfig(max_items=12, estimator="eap", seed=4)
    session = AssessmentSession(params, config)
    rng = np.random.default_rng(15)
    for _ in range(6):
        (item,) = session.next_items(1)
        continuous = item.startswith("c")
        session.record(item, float(rng.uniform()) if continuous else 1)
    saved = session.to_json()
    resumed = AssessmentSession.from_json(saved, params)
    assert resumed.theta == pytest.approx(session.theta)
    assert resumed.next_items(1) == session.next_items(1)
    kinds = {type(v) for v in json.loads(saved)["responses"]}
    assert kinds <= {int, float}


def test_a_session_refuses_a_continuous_score_outside_zero_one() -> None:
    params = pool()
    session = AssessmentSession(params, SessionConfig(max_items=12, estimator="eap"))
    item = params.continuous_ids[0]
    session._pending.append(item)  # as if asked
    with pytest.raises(CatError, match=r"\[0, 1\]"):
        session.record(item, 1.5)
    with pytest.raises(CatError, match=r"\[0, 1\]"):
        session.record(item, True)


def test_the_pool_information_table_covers_continuous_items() -> None:
    params = pool()
    info = PoolInfo.build(params)
    np.testing.assert_allclose(info.at(np.array([0.5]))[0], params.information([0.5])[0], rtol=2e-3)
