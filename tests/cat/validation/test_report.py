"""``validate``, the job behind ``cat validate``, called from Python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.validation import RANDOM_RAW
from cat.validation.report import (
    SubjectPredictions,
    ValidationReport,
    ValidationRow,
    validate,
)
from irt.models import ModelKind
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from itempool.formats.responses import read_responses, write_jsonl


@pytest.fixture(scope="module")
def data() -> ResponseMatrix:
    rng = np.random.default_rng(0)
    params = random_params(150, rng, "2pl")
    return simulate_responses(params, rng.normal(size=24), rng, missing_rate=0.1)


@pytest.fixture(scope="module")
def report(data: ResponseMatrix) -> ValidationReport:
    return validate(data, lengths=[10, 30], policies=["mfi"], model="2pl", seed=4)


#: Every predictor scores the items of a policy that is not a design of its own.
PREDICTORS = ("plug-in", "ridge", "mixture", "low-rank", "chosen")


def test_a_matrix_in_memory_gives_a_typed_report(
    data: ResponseMatrix, report: ValidationReport
) -> None:
    keys = {(r.policy, r.length, r.predictor) for r in report.results}
    assert keys == {
        *(("mfi", k, p) for k in (10, 30) for p in PREDICTORS),
        (RANDOM_RAW, 10, "raw"),
        (RANDOM_RAW, 30, "raw"),
        *(("random", k, p) for k in (10, 30) for p in PREDICTORS),
    }
    for row in report.results:
        assert 0 <= row.coverage <= 1 and row.mae >= 0 and row.n_subjects == 7
    settings = report.settings
    assert settings.responses is None and settings.model is ModelKind.TWO_PL
    assert settings.policies == ["mfi"] and settings.lengths == [10, 30]
    assert settings.seed == 4 and settings.holdout == 0.3 and not settings.leave_one_out
    assert settings.package_version and settings.n_subjects == 24
    assert len(report.subjects) == 7
    truth = data.accuracy()
    for subject in report.subjects:
        assert subject.truth == pytest.approx(truth[data.subject_ids.index(subject.subject_id)])
        assert set(subject.predicted) == {
            f"{policy}/{predictor}@{k}"
            for k in (10, 30)
            for policy, predictor in [
                *(("mfi", p) for p in PREDICTORS),
                (RANDOM_RAW, "raw"),
                *(("random", p) for p in PREDICTORS),
            ]
        }


def test_the_dump_keeps_the_file_layout_and_reads_back(report: ValidationReport) -> None:
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert list(data) == ["results", "verdicts", "settings", "subjects", "created", "data_notes"]
    assert list(data["results"][0]) == list(ValidationRow.model_fields)
    assert {"kendall_tau", "spearman", "mae", "rmse", "coverage"} <= set(data["results"][0])
    first = data["subjects"][0]
    assert list(first)[:2] == ["subject_id", "truth"] and "predicted" not in first
    assert first["mfi/plug-in@10"] == report.subjects[0].predicted["mfi/plug-in@10"]
    assert {
        "responses",
        "model",
        "policies",
        "lengths",
        "holdout",
        "leave_one_out",
        "folds",
        "seed",
        "scenarios",
        "estimator",
        "interval",
        "predictors",
        "package_version",
    } <= set(data["settings"])
    assert ValidationReport.model_validate(data) == report


def test_a_subject_row_is_flat_in_the_file() -> None:
    row = SubjectPredictions(subject_id="m1", truth=0.5, predicted={"mfi/plug-in@30": 0.4})
    flat = row.model_dump(mode="json")
    assert flat == {"subject_id": "m1", "truth": 0.5, "mfi/plug-in@30": 0.4}
    assert SubjectPredictions.model_validate(flat) == row


def test_each_subjects_interval_gives_back_each_rows_coverage(
    report: ValidationReport,
) -> None:
    # Recorded per subject, the intervals let coverage be recomputed for any group.
    for row in report.results:
        name = f"{row.policy}/{row.predictor}@{row.length}"
        shares = [s.covered[name] for s in report.subjects]
        assert np.mean(shares) == pytest.approx(row.coverage)
        for s in report.subjects:
            low, high = s.intervals[name]
            assert low <= s.predicted[name] + 1e-9 and s.predicted[name] <= high + 1e-9
            if not row.policy.startswith("random"):  # one draw: its interval decides
                assert s.covered[name] == float(low - 1e-12 <= s.truth <= high + 1e-12)
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert set(data["subjects"][0]["intervals"]) == set(report.subjects[0].predicted)


def test_a_file_gives_the_same_report_as_the_matrix_it_holds(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    small = simulate_responses(random_params(40, rng, "2pl"), rng.normal(size=40), rng)
    path = tmp_path / "r.jsonl"
    write_jsonl(small, path)
    told: list[tuple[str, float]] = []
    again = validate(
        path,
        lengths=[10],
        policies=["mfi"],
        model=ModelKind.TWO_PL,
        seed=4,
        progress=lambda what, done: told.append((what, done)),
    )
    # The file may list the items in another order, so compare with the matrix it holds.
    same = validate(read_responses(path), lengths=[10], policies=["mfi"], model="2pl", seed=4)
    assert again.results == same.results and again.subjects == same.subjects
    assert len(again.subjects) == 12  # 30% of 40 held out
    assert again.settings.responses == str(path)
    assert told[0][0].startswith("split 1 of 1: calibrating") and told[-1] == ("done", 1.0)


def test_leave_one_out_records_no_holdout() -> None:
    rng = np.random.default_rng(3)
    small = simulate_responses(random_params(40, rng, "2pl"), rng.normal(size=8), rng)
    report = validate(small, lengths=[5], policies=[], model="3pl", leave_one_out=True, holdout=0.5)
    assert report.settings.leave_one_out and report.settings.holdout is None
    # With no policy at all the baselines are still there.
    assert {(r.policy, r.predictor) for r in report.results} == {
        (RANDOM_RAW, "raw"),
        *(("random", p) for p in PREDICTORS),
    }
    assert len(report.subjects) == 8


def test_bad_input_is_a_cat_error(data: ResponseMatrix, tmp_path: Path) -> None:
    with pytest.raises(CatError, match="unknown IRT model '5pl'"):
        validate(data, model="5pl")
    with pytest.raises(CatError, match="unknown policy 'best'"):
        validate(data, policies=["best"], model="2pl")
    with pytest.raises(CatError):
        validate(tmp_path / "none.jsonl")
    with pytest.raises(CatError, match="needs each item's scenario"):
        validate(data, policies=["mfi+cb"], model="2pl")
    with pytest.raises(CatError, match="seed"):
        validate(data, seed=-2)


def test_the_public_name() -> None:
    import cat

    assert cat.validate is validate and validate.__name__ == "validate"


def test_train_size_is_one_way_to_split_and_splits_need_it() -> None:
    rng = np.random.default_rng(6)
    small = simulate_responses(random_params(30, rng, "3pl"), rng.normal(size=16), rng)
    with pytest.raises(CatError, match="chooses the held-out subjects itself: drop holdout"):
        validate(small, train_size=10, holdout=0.3)
    with pytest.raises(CatError, match="drop leave_one_out and folds"):
        validate(small, train_size=10, leave_one_out=True, folds=2)
    with pytest.raises(CatError, match="splits are draws of the train_size"):
        validate(small, splits=2)
    with pytest.raises(CatError, match="train_size must be a whole number"):
        validate(small, train_size=10.5)
