"""The score table of a pool of scored items: log-likelihoods, information, locations."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.score_table import ScoreTable
from irt.polytomous import PolytomousParams
from tests.cat.engine.scored_pool import mixed_pool

PARAMS = mixed_pool(60)
TABLE = ScoreTable.build(PARAMS)


def test_log_likelihood_is_the_sum_of_the_answers_log_probabilities() -> None:
    rng = np.random.default_rng(1)
    items = np.array([rng.choice(60, 12, replace=False), rng.choice(60, 12, replace=False)])
    scores = rng.integers(0, PARAMS.max_scores[items] + 1).astype(float)
    given = np.ones_like(items, dtype=bool)
    given[1, 7:] = False  # the second examinee has answered 7 items so far
    got = TABLE.log_likelihood(items, scores, given)
    log_p = PARAMS.log_probs(TABLE.grid)  # (G, J, K)
    for e in range(2):
        k = given[e]
        want = log_p[:, items[e, k], scores[e, k].astype(int)].sum(axis=1)
        np.testing.assert_allclose(got[e], want, rtol=1e-5, atol=1e-4)


def test_information_matches_the_model_on_and_between_grid_points() -> None:
    items = np.arange(60)[None, :]
    given = np.ones_like(items, dtype=bool)
    for theta in (-2.0, -0.3, 0.0, 0.87, 1.525):
        got = TABLE.information_at(items, given, np.array([theta]))[0]
        want = PARAMS.test_information([theta])[0]
        # Linear between points 0.05 apart: within a fraction of a percent.
        assert got == pytest.approx(want, rel=3e-3)


def test_unanswered_columns_add_nothing() -> None:
    items = np.array([[3, 5, 0, 0]])
    given = np.array([[True, True, False, False]])
    scores = np.array([[1.0, 0.0, 0.0, 0.0]])
    lone = TABLE.log_likelihood(items[:, :2], scores[:, :2], given[:, :2])
    np.testing.assert_array_equal(TABLE.log_likelihood(items, scores, given), lone)
    info = TABLE.information_at(items, given, np.array([0.2]))
    assert info == pytest.approx(TABLE.information_at(items[:, :2], given[:, :2], np.array([0.2])))


def test_a_binary_items_location_is_its_difficulty() -> None:
    params = PolytomousParams.create("2PL", [1.0, 2.0, 0.5], [[0.5], [-2.0], [0.25]])
    b = np.array([-0.5, 1.0, -0.5])  # b = −d/a
    assert ScoreTable.build(params).locations == pytest.approx(b, abs=0.05 + 1e-9)


def test_a_graded_items_location_is_where_half_its_top_score_is_expected() -> None:
    locations = TABLE.locations
    expected = PARAMS.expected_score(TABLE.grid)  # (G, J)
    for j in range(60):
        at = int(np.searchsorted(TABLE.grid, locations[j]))
        half = PARAMS.max_scores[j] / 2
        assert expected[at, j] >= half
        assert at == 0 or expected[at - 1, j] < half
