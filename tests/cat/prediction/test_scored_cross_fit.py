"""Cross-fitted errors of a pool of scored items."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.registry import make_graded_estimator, make_policy
from cat.engine.simulation import CATDesign, draw_scores, replay_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from cat.prediction.conformal import conformal_quantile
from cat.prediction.scored_cross_fit import (
    calibrate_scored_split,
    mean_shares,
    predicted_shares,
    score_shares,
    scored_abilities,
    scored_cross_fit_errors,
)
from irt.polytomous import ItemType
from irt.polytomous_responses import PolytomousResponses
from tests.cat.engine.scored_pool import mixed_pool

PARAMS = mixed_pool(200, seed=11)
THREE_PL = {
    item: ItemType.THREE_PL
    for item, kind in zip(PARAMS.item_ids, PARAMS.item_types, strict=True)
    if kind is ItemType.THREE_PL
}


def _responses(n: int, seed: int, missing: float = 0.0) -> tuple[PolytomousResponses, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    items = np.tile(np.arange(PARAMS.n_items), n)
    values = draw_scores(PARAMS, np.repeat(theta, PARAMS.n_items), items, rng)
    values = values.reshape(n, PARAMS.n_items)
    values[rng.random(values.shape) < missing] = np.nan
    data = PolytomousResponses.from_array(
        values, item_ids=PARAMS.item_ids, n_categories=[int(k) for k in PARAMS.n_categories]
    )
    return data, theta


def test_shares_are_scores_over_the_top_score_of_answered_items() -> None:
    data = PolytomousResponses.from_array(
        [[1, 2, np.nan], [0, 0, 1]], item_ids=["a", "b", "c"], n_categories=[2, 5, 3]
    )
    np.testing.assert_allclose(score_shares(data), [[1.0, 0.5, 0.0], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(mean_shares(data), [0.75, 0.5 / 3])


def test_scored_abilities_recover_theta() -> None:
    data, theta = _responses(150, seed=1, missing=0.3)
    for estimator in ("mle", "eap"):
        estimate, se = scored_abilities(PARAMS, data, estimator)
        assert np.corrcoef(estimate, theta)[0, 1] > 0.97
        assert np.sqrt(np.mean((estimate - theta) ** 2)) == pytest.approx(
            np.sqrt(np.mean(se**2)), rel=0.3
        )


def test_cross_fitted_errors_shrink_with_length_and_cover_scenarios() -> None:
    data, _ = _responses(60, seed=2, missing=0.1)
    scenario = tuple(j % 4 for j in range(PARAMS.n_items))
    names = ("w", "x", "y", "z")
    errors = scored_cross_fit_errors(
        data, THREE_PL, folds=3, lengths=[20, 120], seed=0, scenario=scenario, scenario_names=names
    )
    assert errors.folds == 3 and errors.policy == "mfi+cb" and errors.predictor == "plug-in"
    mae = {k: float(np.mean(np.abs(v))) for k, v in errors.errors.items()}
    assert set(mae) == {"20", "120"} and all(len(v) == 60 for v in errors.errors.values())
    # Sampling alone: the 180 and 80 unseen items of a 200-item pool, SD of a share ~0.3.
    assert mae["120"] < mae["20"] < 0.05
    assert errors.scenario_errors is not None
    assert set(errors.scenario_errors["120"]) == set(names)
    assert all(len(v) == 60 for v in errors.scenario_errors["120"].values())


def test_too_few_subjects_for_the_folds() -> None:
    data, _ = _responses(7, seed=3)
    with pytest.raises(CatError, match="cross_fit 5 needs at least 10 subjects"):
        scored_cross_fit_errors(data, None, folds=5, lengths=[10], seed=0)


def test_intervals_from_training_subjects_cover_held_out_ones() -> None:
    # The interval cat assess gives a scored pool: the prediction ± the conformal
    # half-width of the references' cross-fitted errors. Built from 60 training subjects,
    # it must hold about 90% of 120 held-out subjects' real scores.
    data, _ = _responses(180, seed=6, missing=0.05)
    train, test = data.subset(subjects=np.arange(60)), data.subset(subjects=np.arange(60, 180))
    errors = scored_cross_fit_errors(train, THREE_PL, folds=5, lengths=[40], seed=1)
    half = conformal_quantile(np.abs(np.asarray(errors.errors["40"])))
    calibrated = calibrate_scored_split(train, THREE_PL)
    design = CATDesign(make_policy("mfi", 40), make_graded_estimator("mle"), StoppingRule(40))
    result = replay_cat(calibrated.params, test, design, np.random.default_rng(2), calibrated.pool)
    predicted, _, _ = predicted_shares(calibrated, test, result)
    covered = np.abs(predicted - mean_shares(test)) <= half
    assert 0.8 <= covered.mean() <= 0.99
