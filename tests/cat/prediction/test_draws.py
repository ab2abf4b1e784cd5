"""``cat validate --train-size K --splits S``: draws of the training subjects and the
rows' mean ± sd over them."""

from __future__ import annotations

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.draw_metrics import across_draws, combined
from cat.prediction.draws import draw_generators, validate_draws
from cat.prediction.validation import MIN_TRAIN_SIZE, splits, validate
from irt.simulate import random_params, simulate_responses

PARAMS = random_params(60, np.random.default_rng(0), "3pl")
# Few folds and draws: each is a calibration (the 3PL's priors keep 12 subjects quick).
FAST = dict(repeats=1, interval_folds=2)
DATA = simulate_responses(
    PARAMS, np.random.default_rng(1).normal(size=24), np.random.default_rng(2)
)


def _rows(predictions):  # type: ignore[no-untyped-def]
    return {(p.policy, p.length, p.predictor): p for p in predictions}


def test_one_draw_is_the_holdout_of_as_many_subjects() -> None:
    # 24 subjects, 16 training: a holdout of 1/3 holds out round(8.0) = 8 as well.
    kept = validate(DATA, "3pl", ["mfi"], [5], np.random.default_rng(4), train_size=16, **FAST)
    held = validate(DATA, "3pl", ["mfi"], [5], np.random.default_rng(4), holdout=1 / 3, **FAST)
    assert _rows(kept).keys() == _rows(held).keys()
    for key, p in _rows(kept).items():
        assert len(p.truth) == 8
        np.testing.assert_array_equal(p.subject, _rows(held)[key].subject)
        np.testing.assert_array_equal(p.predicted, _rows(held)[key].predicted)


def test_draws_hold_out_different_subjects_and_the_first_is_the_seeds() -> None:
    draws = validate_draws(DATA, "3pl", ["mfi"], [5], 4, 16, 2, **FAST)
    held = [frozenset(draw[0].subject.tolist()) for draw in draws]
    assert all(len(h) == 8 for h in held) and len(set(held)) == 2
    alone = validate(DATA, "3pl", ["mfi"], [5], np.random.default_rng(4), train_size=16, **FAST)
    assert held[0] == frozenset(alone[0].subject.tolist())
    # More draws never change the earlier ones.
    first = [
        frozenset(splits(24, None, False, g, train_size=16)[0][1].tolist())
        for g in draw_generators(4, 5)
    ]
    assert first[:2] == held

    rows = across_draws(draws)
    assert len(rows) == len(draws[0]) and all(r["splits"] == 2 for r in rows)
    mfi = next(r for r in rows if (r["policy"], r["predictor"]) == ("mfi", "plug-in"))
    per_draw = [_rows(d)[("mfi", 5, "plug-in")].metrics()["mae"] for d in draws]
    assert mfi["mae"] == pytest.approx(np.mean(per_draw))
    assert mfi["mae_sd"] == pytest.approx(np.std(per_draw, ddof=1))


def test_figures_combine_as_mean_and_sd_over_the_draws() -> None:
    base = {"policy": "mfi", "length": 5, "predictor": "plug-in", "n_subjects": 8}
    figures = [
        {
            **base,
            "kendall_tau": 0.5,
            "kendall_tau_sd": 0.01,
            "mae": 0.1,
            "mae_sd": None,
            "coverage": 1.0,
            "coverage_sd": None,
            "spearman": None,
            "null_reasons": {"spearman": "why"},
            "scenario_coverage": [1.0, None],
        },
        {
            **base,
            "kendall_tau": 0.7,
            "kendall_tau_sd": 0.02,
            "mae": 0.3,
            "mae_sd": None,
            "coverage": 0.5,
            "coverage_sd": None,
            "spearman": None,
            "null_reasons": {"spearman": "why"},
            "scenario_coverage": [0.5, None],
        },
        {
            **base,
            "kendall_tau": None,
            "kendall_tau_sd": None,
            "mae": 0.2,
            "mae_sd": None,
            "coverage": 0.0,
            "coverage_sd": None,
            "spearman": None,
            "null_reasons": {"kendall_tau": "too few", "spearman": "why"},
            "scenario_coverage": [0.0, None],
        },
    ]
    row = combined(figures)
    assert row["splits"] == 3 and row["n_subjects"] == 8
    assert row["kendall_tau"] == pytest.approx(0.6)  # over the draws that define it
    assert row["kendall_tau_sd"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert row["mae"] == pytest.approx(0.2) and row["mae_sd"] == pytest.approx(0.1)
    assert row["coverage"] == pytest.approx(0.5) and row["coverage_sd"] == pytest.approx(0.5)
    assert row["spearman"] is None and row["null_reasons"] == {"spearman": "why"}
    assert row["scenario_coverage"] == [pytest.approx(0.5), None]
    assert combined(figures[:1]) == {**figures[0], "splits": 1}


def test_bad_train_sizes_and_splits() -> None:
    with pytest.raises(CatError, match=f"at least {MIN_TRAIN_SIZE}"):
        validate_draws(DATA, "3pl", ["mfi"], [5], 0, MIN_TRAIN_SIZE - 1, 2)
    with pytest.raises(CatError, match="leaves 2 held out; at most 21"):
        validate_draws(DATA, "3pl", ["mfi"], [5], 0, 22, 2)
    with pytest.raises(CatError, match="splits must be at least 1"):
        validate_draws(DATA, "3pl", ["mfi"], [5], 0, 12, 0)
