"""Replay validation: predictions, baselines and honest intervals."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.estimators import MLEstimator
from cat.engine.selection import MaxInfo
from cat.engine.simulation import CATDesign, replay_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from cat.prediction.conformal import conformal_quantile
from cat.prediction.validation import (
    plug_in_accuracy,
    random_raw,
    splits,
)
from irt.simulate import random_params, simulate_responses

PARAMS = random_params(400, np.random.default_rng(0), "3pl")


def _data(n: int = 60, missing: float = 0.1, seed: int = 1):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    return simulate_responses(PARAMS, rng.normal(size=n), rng, missing_rate=missing)


def test_plug_in_is_exact_when_every_item_is_given() -> None:
    data = _data(n=8)
    res = replay_cat(
        PARAMS,
        data,
        CATDesign(MaxInfo(), MLEstimator(), StoppingRule(400)),
        np.random.default_rng(2),
    )
    np.testing.assert_allclose(plug_in_accuracy(PARAMS, data, res), data.accuracy(), atol=1e-12)


def test_random_raw_uses_answered_items_only() -> None:
    data = _data(n=10, missing=0.5)
    acc, half = random_raw(data, 10_000, np.random.default_rng(3), repeats=3)
    np.testing.assert_allclose(acc, np.tile(data.accuracy(), (3, 1)))  # all answered items
    np.testing.assert_allclose(half, 0.0, atol=1e-6)  # no sampling error left


def test_conformal_width_comes_from_the_training_errors_alone() -> None:
    from cat.prediction.training_only import half_widths

    errors = np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    half, _, _ = half_widths({("mfi", 30, "plug-in"): errors})
    # ⌈(5 + 1)·0.9⌉ = 6 > 5: the largest training error is the yardstick.
    assert half[("mfi", 30, "plug-in")] == 1.0 == conformal_quantile(errors)
    half, _, _ = half_widths({("mfi", 30, "plug-in"): np.r_[np.zeros(18), 1.0]})
    assert half[("mfi", 30, "plug-in")] == 0.0  # the 18th of 19


def test_splits() -> None:
    rng = np.random.default_rng(4)
    ((train, test),) = splits(20, 0.3, False, rng)
    assert len(test) == 6 and len(np.intersect1d(train, test)) == 0
    assert len(splits(5, None, True, rng)) == 5
    with pytest.raises(CatError, match="at least 3"):
        splits(6, 0.3, False, rng)


def test_k_fold_splits_hold_out_everyone_once() -> None:
    rng = np.random.default_rng(5)
    parts = splits(23, None, False, rng, folds=4)
    held = np.concatenate([test for _, test in parts])
    assert sorted(held.tolist()) == list(range(23))
    assert sorted(len(test) for _, test in parts) == [5, 6, 6, 6]
    for train, test in parts:
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == 23
    with pytest.raises(CatError, match="use 2 to 11 folds"):
        splits(23, None, False, rng, folds=12)


def test_chosen_predictor_follows_the_training_subjects_errors() -> None:
    from cat.prediction.training_only import half_widths

    plug = np.array([0.0, 0.0, 0.0, 0.4])  # good except on training subject 3
    ridge = np.array([0.1, 0.1, 0.1, 0.0])  # poor except on training subject 3
    half, choice, _ = half_widths(
        {
            ("mfi", 30, "plug-in"): plug,
            ("mfi", 30, "ridge"): ridge,
            ("mfi", 100, "plug-in"): ridge,
            ("mfi", 100, "ridge"): plug,
        }
    )
    # Mean errors 0.1 against 0.075: ridge at 30; the other way round at 100.
    assert choice == {("mfi", 30): "ridge", ("mfi", 100): "plug-in"}
    assert half[("mfi", 30, "chosen")] == half[("mfi", 30, "ridge")] == 0.1
    assert half[("mfi", 30, "plug-in")] == 0.4
    assert half[("mfi", 100, "chosen")] == half[("mfi", 100, "plug-in")] == 0.1


def test_the_default_takes_the_design_of_smallest_training_error() -> None:
    from cat.prediction.training_only import half_widths

    small, large = np.array([0.0, 0.0, 0.1, 0.1]), np.array([0.2, 0.2, 0.2, 0.3])
    half, _, design = half_widths(
        {
            ("irt", 30, "plug-in"): large,
            ("mixture", 30, "mixture"): small,
            ("low-rank", 30, "low-rank"): large,
            ("irt", 100, "plug-in"): small,
            ("mixture", 100, "mixture"): large,
            ("random", 100, "mixture"): 0.5 * small,  # a random row is no design
        }
    )
    assert design == {30: "mixture", 100: "irt"}
    assert half[("default", 30, "chosen")] == half[("mixture", 30, "mixture")] == 0.1
    assert half[("default", 100, "chosen")] == half[("irt", 100, "plug-in")]
