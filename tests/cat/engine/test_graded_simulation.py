"""Adaptive tests on pools of scored items: simulated, replayed, and one at a time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.engine.estimators import MLEstimator
from cat.engine.registry import make_graded_estimator, make_policy
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, draw_scores, replay_cat, simulate_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from irt.polytomous import PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from tests.cat.engine.scored_pool import mixed_pool

PARAMS = mixed_pool(300, seed=7)
POOL = PoolInfo.build(PARAMS)


def _design(policy: str = "mfi", estimator: str = "eap", length: int = 40) -> CATDesign:
    return CATDesign(
        make_policy(policy, length), make_graded_estimator(estimator), StoppingRule(length)
    )


def _rmse(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate - truth) ** 2)))


def test_draw_scores_follows_the_category_probabilities() -> None:
    rng = np.random.default_rng(0)
    item = int(np.flatnonzero(PARAMS.n_categories == 4)[0])
    scores = draw_scores(PARAMS, np.full(40_000, 0.3), np.full(40_000, item), rng)
    shares = np.bincount(scores.astype(int), minlength=4) / 40_000
    np.testing.assert_allclose(shares, PARAMS.probabilities([0.3])[0, item, :4], atol=0.01)


def test_log_probs_at_pairs_are_the_grids_diagonal() -> None:
    theta = np.linspace(-2, 2, 9)
    items = np.arange(9) * 31
    pairs = PARAMS.log_probs_at(theta, items)
    grid = PARAMS.log_probs(theta)  # (T, J, K)
    np.testing.assert_allclose(pairs, grid[np.arange(9), items], rtol=1e-12)


@pytest.mark.parametrize("estimator", ["eap", "map", "mle"])
def test_mfi_recovers_theta_and_its_se_is_honest(estimator: str) -> None:
    theta = np.random.default_rng(1).normal(size=400)
    mfi = simulate_cat(PARAMS, theta, _design("mfi", estimator), np.random.default_rng(2), POOL)
    rnd = simulate_cat(PARAMS, theta, _design("random", estimator), np.random.default_rng(2), POOL)
    assert _rmse(mfi.theta_hat, theta) < 0.85 * _rmse(rnd.theta_hat, theta)
    assert _rmse(mfi.theta_hat, theta) == pytest.approx(float(np.sqrt(np.mean(mfi.se**2))), rel=0.2)
    assert (mfi.n_items == 40).all()
    for row, scores in zip(mfi.items, mfi.right, strict=True):
        assert len(set(row.tolist())) == 40
        assert np.all(scores <= PARAMS.max_scores[row]) and np.all(scores >= 0)


@pytest.mark.parametrize("policy", ["kl", "randomesque", "astrat", "proportional", "mfi+cb"])
def test_every_policy_runs_on_a_scored_pool(policy: str) -> None:
    theta = np.random.default_rng(3).normal(size=60)
    scenario = tuple(j % 3 for j in range(PARAMS.n_items))
    design = CATDesign(
        make_policy(policy, 30, scenario=scenario), make_graded_estimator("eap"), StoppingRule(30)
    )
    result = simulate_cat(PARAMS, theta, design, np.random.default_rng(4), POOL)
    assert all(len(set(row.tolist())) == 30 for row in result.items)
    # Better than knowing nothing (the prior's RMSE is about 1).
    assert _rmse(result.theta_hat, theta) < 0.5


def test_graded_scores_beat_the_same_items_thresholded() -> None:
    # Thresholding a graded item at its category k gives a 2PL item with the same a and
    # d_k exactly, so both tests use true parameters: the difference is the scores' alone.
    rng = np.random.default_rng(5)
    a = rng.lognormal(0.0, 0.25, 200)
    d = -(a[:, None] * np.sort(rng.normal(0, 1, (200, 4)), axis=1))
    graded = PolytomousParams.create("graded", a, d)
    binary = PolytomousParams.create("2PL", a, d[:, 1:2])
    theta = rng.normal(size=300)
    rmse = {}
    for name, params in (("graded", graded), ("binary", binary)):
        result = simulate_cat(params, theta, _design(length=30), np.random.default_rng(6))
        rmse[name] = _rmse(result.theta_hat, theta)
    assert rmse["graded"] < 0.85 * rmse["binary"]


def test_same_seed_same_tests() -> None:
    theta = np.random.default_rng(8).normal(size=20)
    runs = [
        simulate_cat(PARAMS, theta, _design("randomesque"), np.random.default_rng(9), POOL)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].items, runs[1].items)
    np.testing.assert_array_equal(runs[0].right, runs[1].right)


def test_replay_asks_answered_items_and_uses_the_recorded_scores() -> None:
    rng = np.random.default_rng(10)
    theta = rng.normal(size=30)
    values = np.array(
        [
            draw_scores(PARAMS, np.full(PARAMS.n_items, t), np.arange(PARAMS.n_items), rng)
            for t in theta
        ]
    ).astype(int)
    values[rng.random(values.shape) < 0.4] = -1  # 40% never answered
    responses = PolytomousResponses(
        subject_ids=tuple(f"s{e}" for e in range(30)),
        item_ids=PARAMS.item_ids,
        values=values,
        n_categories=tuple(int(k) for k in PARAMS.n_categories),
    )
    result = replay_cat(PARAMS, responses, _design(), np.random.default_rng(11), POOL)
    for e in range(30):
        asked = result.items[e][result.items[e] >= 0]
        assert np.all(values[e, asked] >= 0)
        np.testing.assert_array_equal(result.right[e, : asked.size], values[e, asked])


def test_binary_and_scored_pieces_do_not_mix() -> None:
    binary_answers = ResponseMatrix.from_array(
        np.ones((2, PARAMS.n_items)), item_ids=PARAMS.item_ids
    )
    with pytest.raises(
        CatError, match=r"scores replay on a pool of scored items, 0/1 answers on a binary pool"
    ):
        replay_cat(PARAMS, binary_answers, _design(), np.random.default_rng(0), POOL)
    wrong = CATDesign(make_policy("mfi", 10), MLEstimator(), StoppingRule(10))
    with pytest.raises(CatError, match="needs a graded estimator"):
        simulate_cat(PARAMS, np.zeros(2), wrong, np.random.default_rng(0), POOL)


def _session(**config: object) -> AssessmentSession:
    return AssessmentSession(PARAMS, SessionConfig(**config), pool_info=POOL)


def _answer(session: AssessmentSession, rng: np.random.Generator, n: int) -> None:
    for _ in range(n):
        for item in session.next_items():
            j = PARAMS.item_ids.index(item)
            score = int(draw_scores(PARAMS, np.array([0.7]), np.array([j]), rng)[0])
            session.record(item, score)


@pytest.mark.parametrize("policy", ["mfi", "kl", "randomesque", "astrat"])
def test_a_session_on_a_scored_pool_resumes_exactly(policy: str) -> None:
    whole = _session(max_items=30, seed=3, policy=policy, estimator="eap")
    _answer(whole, np.random.default_rng(1), 30)
    first = _session(max_items=30, seed=3, policy=policy, estimator="eap")
    rng = np.random.default_rng(1)
    _answer(first, rng, 12)
    resumed = AssessmentSession.from_json(first.to_json(), PARAMS, pool_info=POOL)
    _answer(resumed, rng, 18)
    assert resumed.given == whole.given and resumed.responses == whole.responses
    assert resumed.theta == pytest.approx(whole.theta, abs=1e-12)
    assert whole.done and abs(whole.theta - 0.7) < 3 * whole.se
    assert max(whole.responses) > 1  # graded items were asked and scored above 1
    assert json.loads(whole.to_json())["responses"] == whole.responses


def test_a_session_refuses_scores_outside_the_item() -> None:
    session = _session(max_items=5)
    item = session.next_items()[0]
    top = int(PARAMS.max_scores[PARAMS.item_ids.index(item)])
    with pytest.raises(CatError, match=rf"allows scores 0..{top}, got {top + 1}"):
        session.record(item, top + 1)
    with pytest.raises(CatError, match="whole number"):
        session.record(item, 0.5)  # type: ignore[arg-type]
    session.record(item, None)
    assert session.skipped == [item]


def test_a_reference_design_is_refused_on_a_scored_pool() -> None:
    with pytest.raises(CatError, match="the mixture design is for pools of 0/1 items"):
        _session(design="mixture")
    with pytest.raises(CatError, match="binary items; a scored pool takes"):
        _session(estimator="wle")
