"""Ability estimators on pools of scored items, against the scoring of irt."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.graded_estimators import GradedAnswers, GradedEAP, GradedMAP, GradedML
from cat.engine.registry import make_graded_estimator
from cat.engine.score_table import ScoreTable
from cat.engine.simulation import draw_scores
from cat.errors import CatError
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_scoring import polytomous_scores
from tests.cat.engine.scored_pool import mixed_pool

PARAMS = mixed_pool(80, seed=3)
TABLE = ScoreTable.build(PARAMS)


def _answers(n_examinees: int, length: int, seed: int) -> tuple[GradedAnswers, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_examinees)
    items = np.array([rng.choice(PARAMS.n_items, length, replace=False) for _ in theta])
    scores = draw_scores(PARAMS, np.repeat(theta, length), items.ravel(), rng)
    return GradedAnswers(TABLE, items, scores.reshape(items.shape)), theta


def _as_responses(answers: GradedAnswers) -> PolytomousResponses:
    values = np.full((answers.items.shape[0], PARAMS.n_items), -1)
    for e, (row, score) in enumerate(zip(answers.items, answers.scores, strict=True)):
        values[e, row[row >= 0]] = score[row >= 0]
    return PolytomousResponses(
        subject_ids=tuple(f"s{e}" for e in range(len(values))),
        item_ids=PARAMS.item_ids,
        values=values,
        n_categories=tuple(int(k) for k in PARAMS.n_categories),
    )


def test_eap_and_map_agree_with_irts_scoring() -> None:
    answers, _ = _answers(30, 15, seed=4)
    start = np.zeros(30)
    for estimator, method in ((GradedEAP(), "eap"), (GradedMAP(), "map")):
        theta, se = estimator.estimate(answers, start)
        ref = polytomous_scores(_as_responses(answers), PARAMS, method, n_quad=601)
        np.testing.assert_allclose(theta, ref.theta, atol=2e-3)
        # MAP's SE is the expected information's; irt's uses the observed curvature.
        np.testing.assert_allclose(se, ref.sd, rtol=1e-2 if method == "eap" else 0.15)


def test_ml_is_where_the_log_likelihood_is_flat() -> None:
    answers, _ = _answers(20, 25, seed=5)
    theta, se = GradedML().estimate(answers, np.zeros(20))
    mixed = ~answers.at_an_end()
    assert mixed.sum() >= 15

    def log_lik(t: np.ndarray) -> np.ndarray:
        lp = PARAMS.log_probs_at(np.repeat(t, 25), answers.items.ravel())
        picked = lp[np.arange(lp.shape[0]), answers.scores.ravel().astype(int)]
        return picked.reshape(20, 25).sum(axis=1)

    h = 1e-4
    slope = (log_lik(theta + h) - log_lik(theta - h)) / (2 * h)
    curvature = (log_lik(theta + h) - 2 * log_lik(theta) + log_lik(theta - h)) / h**2
    # Within a hair of the maximum: |θ̂ − θ_ML| = |slope / curvature| below 2e-3.
    assert np.all(np.abs(slope[mixed] / curvature[mixed]) < 2e-3)
    info = PARAMS.information(theta[mixed][:, None].ravel())
    want = np.array([info[k, answers.items[e]].sum() for k, e in enumerate(np.flatnonzero(mixed))])
    np.testing.assert_allclose(se[mixed], 1 / np.sqrt(want), rtol=5e-3)


def test_ml_falls_back_to_map_while_every_answer_is_at_an_end() -> None:
    items = np.array([[0, 1, 2], [0, 1, 2], [0, 1, 2]])
    top = PARAMS.max_scores[[0, 1, 2]].astype(float)
    scores = np.array([[0.0, 0.0, 0.0], top, [0.0, top[1], 0.0]])
    answers = GradedAnswers(TABLE, items, scores)
    assert answers.at_an_end().tolist() == [True, True, False]
    theta, _ = GradedML().estimate(answers, np.zeros(3))
    fallback, _ = GradedMAP().estimate(answers.rows(np.array([0, 1])), np.zeros(2))
    np.testing.assert_array_equal(theta[:2], fallback)
    assert theta[0] < -0.5 and theta[1] > 0.5


def test_no_answers_gives_the_prior() -> None:
    answers = GradedAnswers(TABLE, np.full((2, 3), -1), np.zeros((2, 3)))
    theta, se = GradedEAP(prior_mean=0.5, prior_sd=0.8).estimate(answers, np.zeros(2))
    np.testing.assert_allclose(theta, 0.5, atol=1e-6)
    np.testing.assert_allclose(se, 0.8, rtol=1e-4)


def test_weighted_likelihood_is_refused_on_a_scored_pool() -> None:
    with pytest.raises(CatError, match="binary items; a scored pool takes mle, map, eap"):
        make_graded_estimator("wle")
    with pytest.raises(CatError, match="unknown estimator"):
        make_graded_estimator("bayes")
    with pytest.raises(CatError, match="prior_sd"):
        GradedEAP(prior_sd=0)
