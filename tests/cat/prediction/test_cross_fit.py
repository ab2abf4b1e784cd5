"""``cat.prediction.cross_fit``: how many folds a cross-fit runs, and its folds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.cross_fit import check_folds, fold_count, fold_splits, replay_lengths


def test_default_folds_give_way_to_leave_one_out_on_few_subjects() -> None:
    assert fold_count(10, 5, chosen=False) == (5, None)
    folds, note = fold_count(8, 5, chosen=False)
    assert folds == 8 and note == (
        "8 subjects are too few for 5 cross-fit folds of 2 or more; the cross-fit leaves "
        "one subject out at a time (8 folds)"
    )
    folds, note = fold_count(2, 5, chosen=False)
    assert folds is None and note is not None and note.startswith("2 subjects are too few")


def test_folds_asked_for_are_kept_or_refused_with_what_works() -> None:
    assert fold_count(8, 4, chosen=True) == (4, None)
    assert fold_count(8, 8, chosen=True) == (8, None)  # leave-one-out, asked for
    with pytest.raises(CatError) as caught:
        fold_count(8, 5, chosen=True)
    assert str(caught.value) == (
        "cross_fit 5 needs at least 10 subjects, the responses have 8; "
        "use cross_fit 4 or fewer, or cross_fit 8 (leave-one-out)"
    )
    with pytest.raises(CatError, match=r"at least 3 subjects .* have 2; use --no-cross-fit"):
        check_folds(2, 2)


def test_leave_one_out_holds_each_subject_out_once() -> None:
    parts = fold_splits(5, 5, np.random.default_rng(0))
    assert [test.tolist() for _, test in parts] == [[0], [1], [2], [3], [4]]
    assert all(len(train) == 4 and k not in train for k, (train, _) in enumerate(parts))
    assert sorted(np.concatenate([t for _, t in fold_splits(9, 3, np.random.default_rng(0))])) == (
        list(range(9))
    )


def test_every_fold_of_the_shipped_example_converges() -> None:
    # Under priors with the parameter-expansion step, fold 1 of this split cycled 500
    # times (80 s of `cat calibrate --pool`); plain EM takes 11-18 cycles on each.
    import warnings

    from irt.em import EMCalibrator
    from itempool.formats.responses import read_responses

    example = Path(__file__).resolve().parents[3] / "examples" / "responses.jsonl"
    responses = read_responses(example)
    for train, _ in fold_splits(responses.n_subjects, 5, np.random.default_rng(0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a ConvergenceWarning fails the test
            fit = EMCalibrator("3pl").fit(responses.subset(subjects=train))
        assert fit.converged_ and fit.n_iter_ < 50


def test_a_small_pool_is_replayed_at_half_its_size_too() -> None:
    # Within the pool: the lengths asked for, nothing added.
    assert replay_lengths([100, 250], 12_032) == [100, 250]
    assert replay_lengths([100, 250], 180) == [100, 180]
    # Every length at or past the whole pool: the whole pool, and half of it, whose
    # errors a shorter test needs (the whole pool's accuracy is known, its errors near 0).
    assert replay_lengths([100, 250], 60) == [30, 60]
    assert replay_lengths([50], 50) == [25, 50]
    assert replay_lengths([100, 250], 8) == [8]  # half of it would be under 5 items
