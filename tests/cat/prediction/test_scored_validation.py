"""Replay validation on scores 0..m."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.scored_validation import validate_scored
from cat.validation.report import validate_scored_responses
from itempool.formats.responses import write_scored_jsonl
from tests.cat.prediction.test_scored_cross_fit import THREE_PL, _responses


@pytest.fixture(scope="module")
def scores() -> object:
    return _responses(60, seed=9, missing=0.1)[0]


def test_every_row_is_there_with_training_only_intervals(scores: object) -> None:
    rows = validate_scored(
        scores,  # type: ignore[arg-type]
        THREE_PL,
        ["default"],
        [20, 60],
        np.random.default_rng(0),
        holdout=0.5,
        repeats=3,
        interval_folds=3,
    )
    keys = {(p.policy, p.length, p.predictor) for p in rows}
    assert keys == {
        (policy, length, predictor)
        for length in (20, 60)
        for policy, predictor in (
            ("default", "chosen"),
            ("random", "plug-in"),
            ("random-raw", "raw"),
        )
    }
    for p in rows:
        metrics = p.metrics()
        assert metrics["n_subjects"] == 30
        assert metrics["repeats"] == (1 if p.policy == "default" else 3)
        # Intervals from the other 30 subjects only: they must hold most held-out scores.
        assert metrics["coverage"] >= 0.7
        if p.policy == "default":
            assert np.all(p.low <= p.predicted + 1e-12) and np.all(p.predicted <= p.high + 1e-12)
            assert metrics["coverage_theta_only"] is not None
    default = {p.length: p.metrics()["mae"] for p in rows if p.policy == "default"}
    assert default[60] < default[20] < 0.06


def test_the_report_keeps_the_keys_and_names_the_model(scores: object, tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    write_scored_jsonl(scores, path)  # type: ignore[arg-type]
    report = validate_scored_responses(path, lengths=[20], holdout=0.5, repeats=2, seed=1)
    dumped = report.model_dump(mode="json")
    assert set(dumped) == {"results", "verdicts", "settings", "subjects", "created", "data_notes"}
    assert dumped["settings"]["model"] == "graded"
    assert dumped["settings"]["interval"].startswith("90%: prediction ± the split-conformal")
    assert {"policy", "length", "kendall_tau", "spearman", "mae", "rmse", "coverage"} <= set(
        dumped["results"][0]
    )
    assert [v["length"] for v in dumped["verdicts"]] == [20]
    assert len(dumped["subjects"]) == 30
    with pytest.raises(CatError, match="unknown graded model 'rasch'"):
        validate_scored_responses(path, model="rasch")
