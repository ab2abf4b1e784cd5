"""Honest comparisons in ``cat validate``: the default is what ``cat assess`` runs, random
rows beside it, and intervals from the training subjects only, whose coverage can fail."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cat
from cat.assessment.session import SessionConfig
from cat.engine.audit import Audited
from cat.engine.registry import (
    DEFAULT,
    DEFAULT_CONTENT_BALANCING,
    DEFAULT_ESTIMATOR,
    DEFAULT_POLICY,
    default_selection,
    make_estimator,
    make_policy,
)
from cat.engine.selection import MaxInfo
from cat.errors import CatError
from cat.pools.scenarios import scenarios_of
from cat.prediction.cross_fit import cross_fit_errors
from cat.prediction.predictions import Predictions
from cat.prediction.training_only import Blocks, TrainingOnly, interval_blocks, training_only
from cat.prediction.validation import RANDOM_RAW, splits, validate
from cat.validation import report as validation_report
from irt.models import ModelKind
from irt.responses import MISSING, ResponseMatrix
from irt.simulate import random_params, simulate_responses

DEMO_EN = Path(__file__).resolve().parents[3] / "item_pools" / "demo-en"
PARAMS = random_params(150, np.random.default_rng(0), "3pl")


def _data(n: int = 40, seed: int = 1) -> ResponseMatrix:
    rng = np.random.default_rng(seed)
    return simulate_responses(PARAMS, rng.normal(size=n), rng, missing_rate=0.1)


def _by_key(predictions: list[Predictions]) -> dict[tuple[str, int, str], Predictions]:
    return {(p.policy, p.length, p.predictor): p for p in predictions}


def _flipped(data: ResponseMatrix, rows: np.ndarray) -> ResponseMatrix:
    """``data`` with every answer of ``rows`` turned the other way."""
    values = data.values.copy()
    part = values[rows]
    values[rows] = np.where(part == MISSING, MISSING, 1 - part)
    return ResponseMatrix(data.subject_ids, data.item_ids, values)


def test_the_default_is_what_cat_assess_runs() -> None:
    pool = cat.load_pool(DEMO_EN)
    assert pool.params is not None
    result = cat.assess(pool, cat.SimulatedExaminee(theta=0.3, seed=1), length=20)
    config = SessionConfig(**result.settings.model_dump(include=set(SessionConfig.model_fields)))
    # A pool without cross-fitted errors runs the IRT design.
    assert pool.manifest.design_errors is None and config.design == "irt"
    assert config.policy == DEFAULT_POLICY and config.estimator == DEFAULT_ESTIMATOR
    assert config.content_balancing is DEFAULT_CONTENT_BALANCING
    codes = scenarios_of(pool.items, pool.params.item_ids).codes
    # With scenarios: the very policy object the session builds, content-balanced.
    assert make_policy("irt", 20, scenario=codes) == config.policy_for(codes)
    assert default_selection(codes) == "mfi+cb" and default_selection(None) == "mfi"
    # Without scenarios: MFI, with the audit items every design has.
    assert make_policy("irt", 20) == Audited(MaxInfo())
    assert type(config.estimator_for()) is type(make_estimator(DEFAULT_ESTIMATOR))
    # The errors a pool stores for cat assess are cross-fitted under the same default.
    errors = cross_fit_errors(_data(12), "3pl", 2, [10], seed=0, scenario=(0, 1) * 75)
    assert errors["irt"].policy == default_selection((0, 1) * 75) == "mfi+cb"
    assert set(errors) == {"irt", "mixture", "low-rank"}


def test_the_irt_design_replays_mfi_and_widens_as_cat_assess_does() -> None:
    rows = _by_key(validate(_data(), "3pl", ["irt", "mfi"], [25], np.random.default_rng(3)))
    default, mfi = rows[("irt", 25, "plug-in")], rows[("mfi", 25, "plug-in")]
    assert ("irt", 25, "ridge") not in rows  # cat assess has the plug-in only
    # No scenarios: the IRT design is MFI with ML θ and the plug-in.
    np.testing.assert_allclose(default.predicted, mfi.predicted)
    # MFI's half-width is one for all; the IRT design's is scaled, as cat assess scales
    # it, by each subject's disagreement with the mixture's prediction of its answers.
    assert np.ptp(mfi.half_width) == 0 and np.ptp(default.half_width) > 0
    assert default.theta_low is not None and default.theta_high is not None
    # The interval is the θ-only one widened, where narrower, to ± the half-width.
    np.testing.assert_allclose(
        default.low,
        np.maximum(0, np.minimum(default.theta_low, default.predicted - default.half_width)),
    )
    np.testing.assert_allclose(
        default.high,
        np.minimum(1, np.maximum(default.theta_high, default.predicted + default.half_width)),
    )
    np.testing.assert_allclose(mfi.high - mfi.low, 2 * mfi.half_width)
    # Past the 30th item the IRT design asks audit items and MFI does not: two replays,
    # not one shared.
    rows = _by_key(validate(_data(), "3pl", ["irt", "mfi"], [40], np.random.default_rng(3)))
    longer, plain = rows[("irt", 40, "plug-in")], rows[("mfi", 40, "plug-in")]
    assert not np.allclose(longer.predicted, plain.predicted)


def test_the_default_takes_one_design_per_subject_with_its_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No subject's answers set the design aside here (the next test does).
    monkeypatch.setattr(TrainingOnly, "falls_back", lambda *_: False)
    rows = _by_key(validate(_data(), "3pl", [DEFAULT, "mfi"], [25], np.random.default_rng(3)))
    default, irt, mfi = (
        rows[(DEFAULT, 25, "chosen")],
        rows[("irt", 25, "plug-in")],
        rows[("mfi", 25, "plug-in")],
    )
    designs = {
        name: rows[(name, 25, "plug-in" if name == "irt" else name)]
        for name in ("irt", "mixture", "low-rank")
    }
    assert (DEFAULT, 25, "plug-in") not in rows and (DEFAULT, 25, "ridge") not in rows
    # No scenarios: the IRT design is MFI with ML θ and the plug-in.
    np.testing.assert_allclose(irt.predicted, mfi.predicted)
    # Each subject's prediction is one design's, with that design's half-width.
    for k in range(len(default.truth)):
        same = [
            name
            for name, row in designs.items()
            if np.isclose(row.predicted[0, k], default.predicted[0, k])
            and np.isclose(row.half_width[0, k], default.half_width[0, k])
        ]
        assert same, k
        if same == ["irt"]:  # the θ-only interval widened, where narrower, to ± the half-width
            assert irt.theta_low is not None
            low = min(irt.theta_low[0, k], default.predicted[0, k] - default.half_width[0, k])
            assert np.isclose(default.low[0, k], max(0.0, low))
        elif "irt" not in same:
            assert np.isclose(default.high[0, k] - default.low[0, k], 2 * default.half_width[0, k])
    np.testing.assert_allclose(mfi.high - mfi.low, 2 * mfi.half_width)


def test_a_subject_whose_answers_do_not_follow_the_design_takes_the_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[int, tuple[str, int, str]]] = []

    def every_one(_: TrainingOnly, block: int, key: tuple[str, int, str], *__: float) -> bool:
        calls.append((block, key))
        return True

    monkeypatch.setattr(TrainingOnly, "falls_back", every_one)
    rows = _by_key(validate(_data(), "3pl", [DEFAULT], [25], np.random.default_rng(3)))
    default = rows[(DEFAULT, 25, "chosen")]
    designs = [rows[("irt", 25, "plug-in")], rows[("mixture", 25, "mixture")]]
    designs.append(rows[("low-rank", 25, "low-rank")])
    assert len(calls) == len(default.truth)
    for k in range(len(default.truth)):
        # The answers' own prediction, no design's, inside its own interval.
        assert not any(np.isclose(d.predicted[0, k], default.predicted[0, k]) for d in designs)
        assert default.low[0, k] <= default.predicted[0, k] <= default.high[0, k]
        assert default.high[0, k] - default.low[0, k] >= 2 * default.half_width[0, k] - 1e-9


def test_random_rows_are_always_there_with_their_sd_and_repeats() -> None:
    data = _data()
    for repeats in (2, 3):
        report = validation_report.validate(
            data, lengths=[10, 30], policies=[DEFAULT], model="3pl", repeats=repeats, seed=1
        )
        assert report.settings.repeats == repeats
        for length in (10, 30):
            here = {(r.policy, r.predictor): r for r in report.results if r.length == length}
            assert set(here) == {
                (DEFAULT, "chosen"),
                ("irt", "plug-in"),
                ("mixture", "mixture"),
                ("low-rank", "low-rank"),
                ("random", "plug-in"),
                ("random", "ridge"),
                ("random", "mixture"),
                ("random", "low-rank"),
                ("random", "chosen"),
                (RANDOM_RAW, "raw"),
            }
            for (policy, _), row in here.items():
                random = policy in ("random", RANDOM_RAW)
                assert row.repeats == (repeats if random else 1)
                assert (row.kendall_tau_sd is not None) is random
                assert (row.mae_sd is not None) is random
                assert (row.coverage_sd is not None) is random
            assert here[("irt", "plug-in")].coverage_theta_only is not None
            assert here[("random", "plug-in")].coverage_theta_only is not None
            assert here[("random", "ridge")].coverage_theta_only is None
    rows = _by_key(validate(data, "3pl", [], [10], np.random.default_rng(2), repeats=4))
    assert rows[("random", 10, "ridge")].predicted.shape == (4, 12)
    assert rows[(RANDOM_RAW, 10, "raw")].predicted.shape == (4, 12)


def test_a_biased_predictor_fails_coverage() -> None:
    """Intervals from the training subjects cannot see a bias only the held-out subjects
    have (as a new model unlike every reference would): coverage drops. Intervals from
    the other held-out subjects' errors would have absorbed it and stayed near 90%."""
    data = _data()
    fair = _by_key(validate(data, "3pl", [DEFAULT, "mfi"], [50], np.random.default_rng(5)))
    biased = _by_key(
        validate(data, "3pl", [DEFAULT, "mfi"], [50], np.random.default_rng(5), held_out_shift=0.25)
    )
    for key, row in biased.items():
        if key[0] == RANDOM_RAW:
            continue
        np.testing.assert_array_equal(row.half_width, fair[key].half_width)
        coverage, honest = row.metrics()["coverage"], fair[key].metrics()["coverage"]
        assert isinstance(coverage, float) and isinstance(honest, float)
        assert coverage < 0.85 and coverage < honest - 0.5, key
    assert fair[(DEFAULT, 50, "chosen")].metrics()["coverage"] >= 0.85
    theta_only = biased[("irt", 50, "plug-in")].metrics()["coverage_theta_only"]
    assert isinstance(theta_only, float) and theta_only < 0.85


def _intervals(
    data: ResponseMatrix, seed: int, length: int, leave_one_out: bool
) -> tuple[Blocks, TrainingOnly]:
    """The blocks and training-only widths ``validate`` builds for [default, mfi] at
    ``length`` with ``seed`` (its random draws, in its order)."""
    rng = np.random.default_rng(seed)
    parts = splits(data.n_subjects, None if leave_one_out else 0.3, leave_one_out, rng)
    blocks = interval_blocks(data.n_subjects, parts, 5, rng)
    _, inner_rng = rng.spawn(2)
    run = ["irt", "mixture", "low-rank", "mfi", "random"]
    return blocks, training_only(data, ModelKind.THREE_PL, blocks, run, [length], inner_rng)


def test_no_held_out_answers_enter_any_interval() -> None:
    """Flipping every held-out answer moves neither a constant half-width nor the
    function of disagreement that scales the others (only the subjects' own
    disagreements, which a model being assessed brings too)."""
    data = _data()
    ((_, test),) = splits(data.n_subjects, 0.3, False, np.random.default_rng(7))
    flipped = _flipped(data, test)
    runs = [
        _by_key(validate(d, "3pl", [DEFAULT, "mfi"], [20], np.random.default_rng(7)))
        for d in (data, flipped)
    ]
    for key in [(p, 20, "plug-in") for p in ("mfi", "random")]:
        np.testing.assert_array_equal(runs[0][key].half_width, runs[1][key].half_width)
    (blocks, fair), (_, other) = (_intervals(d, 7, 20, False) for d in (data, flipped))
    assert blocks.held_out[0] and not any(blocks.held_out[1:])
    assert fair.half_width[0] == other.half_width[0]
    assert fair.scaled[0] == other.scaled[0] and len(fair.scaled[0]) >= 4
    changed = runs[1][(DEFAULT, 20, "chosen")]
    assert not np.allclose(changed.predicted, runs[0][(DEFAULT, 20, "chosen")].predicted)


def test_leave_one_out_keeps_each_subject_out_of_its_own_interval() -> None:
    data = _data(n=12)
    subject = 3
    flipped = _flipped(data, np.array([subject]))
    (blocks, fair), (_, other) = (_intervals(d, 8, 15, True) for d in (data, flipped))
    own = int(blocks.block_of(data.n_subjects)[subject])
    assert fair.half_width[own] == other.half_width[own]
    assert fair.scaled[own] == other.scaled[own]
    # The subject is in the other blocks' training subjects, so theirs may move.
    assert any(
        fair.half_width[b] != other.half_width[b] or fair.scaled[b] != other.scaled[b]
        for b in range(len(blocks.members))
        if b != own
    )


def test_interval_blocks() -> None:
    rng = np.random.default_rng(0)
    parts = splits(30, 0.3, False, rng)
    blocks = interval_blocks(30, parts, 5, rng)
    np.testing.assert_array_equal(blocks.members[0], parts[0][1])
    assert blocks.held_out == [True] + [False] * 5
    assert sorted(np.concatenate(blocks.members[1:]).tolist()) == parts[0][0].tolist()
    assert blocks.pairs() == [(0, b) for b in range(1, 6)]  # K calibrations
    loo = interval_blocks(30, splits(30, None, True, rng), 5, rng)
    assert len(loo.members) == 6 and all(loo.held_out) and len(loo.pairs()) == 15
    assert sorted(np.concatenate(loo.members).tolist()) == list(range(30))
    with pytest.raises(CatError, match="subjects to calibrate on"):
        interval_blocks(4, splits(4, None, True, rng), 5, rng)


def test_per_scenario_intervals_come_from_training_subjects_and_can_fail() -> None:
    """Each design row and the default predict every scenario's accuracy; its interval is
    ± the training subjects' cross-fitted errors on that scenario, and a bias only the
    held-out subjects have makes its coverage fail."""
    data, codes = _data(), (0, 0, 1) * 50
    ((_, test),) = splits(data.n_subjects, 0.3, False, np.random.default_rng(5))
    fair, biased, flipped = (
        _by_key(
            validate(
                d,
                "3pl",
                [DEFAULT],
                [50],
                np.random.default_rng(5),
                scenario=codes,
                held_out_shift=shift,
            )
        )
        for d, shift in ((data, 0.0), (data, 0.25), (_flipped(data, test), 0.0))
    )
    in_scenario = np.asarray(codes) == 1
    for key in [(DEFAULT, 50, "chosen"), ("irt", 50, "plug-in"), ("mixture", 50, "mixture")]:
        row = fair[key]
        assert row.scenario_predicted is not None and row.scenario_truth is not None
        assert row.scenario_half_width is not None
        assert row.scenario_predicted.shape == row.scenario_half_width.shape == (len(test), 2)
        # The truth is the accuracy on the scenario's items the subject answered.
        sub = data.subset(subjects=row.subject)
        right = (sub.values == 1) & sub.observed & in_scenario
        np.testing.assert_allclose(
            row.scenario_truth[:, 1], right.sum(axis=1) / (sub.observed & in_scenario).sum(axis=1)
        )
        # Held-out answers move the predictions, never the half-widths.
        np.testing.assert_array_equal(row.scenario_half_width, flipped[key].scenario_half_width)
        assert np.all(row.scenario_half_width > 0)
        honest = row.metrics()
        assert len(honest["scenario_coverage"]) == 2 and len(honest["scenario_mae"]) == 2
        assert honest["scenario_coverage_min"] >= 0.6, key
        shifted = biased[key].metrics()
        assert shifted["scenario_coverage_mean"] < 0.5 < honest["scenario_coverage_mean"], key
    # Rows that do not predict per scenario report nothing per scenario.
    assert "scenario_coverage" not in fair[("random", 50, "ridge")].metrics()


def test_a_subject_falls_back_below_the_training_slope_threshold_or_lowest_gain() -> None:
    key = ("irt", 100, "plug-in")
    inner = TrainingOnly(
        slope_threshold=[{key: -3.0}], lowest_gain=[{key: 0.05}], fallback_half_width=[{}]
    )
    assert not inner.falls_back(0, key, -2.9, 0.06)
    assert inner.falls_back(0, key, -3.1, 0.06)  # the slope check
    assert inner.falls_back(0, key, 0.0, 0.04)  # the difficulty check
    assert not inner.falls_back(0, key, np.nan, np.nan)
    # Before the audits begin (30 items) only the difficulty check can set it aside.
    short = ("irt", 30, "plug-in")
    inner.slope_threshold[0][short], inner.lowest_gain[0][short] = -3.0, 0.05
    assert not inner.falls_back(0, short, -9.0, 0.06) and inner.falls_back(0, short, 0.0, 0.04)
    # Without the training subjects' z, the design's own 1% point.
    other = ("mixture", 100, "mixture")
    assert inner.falls_back(0, other, -2.4, np.nan) and not inner.falls_back(0, other, -2.2, 1.0)
