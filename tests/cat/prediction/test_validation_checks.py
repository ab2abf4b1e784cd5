"""What ``cat validate`` checks: subjects without answers left out with a note, and no
figure ever NaN (undefined: None with its reason; otherwise an error)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.predictions import Predictions
from cat.prediction.validation_checks import answered_subjects, refuse_nan
from cat.prediction.verdicts import ValidationRow, verdicts
from itempool.formats.responses import read_responses, read_scored_responses


def test_a_csv_row_of_empty_cells_is_left_out_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("subject_id,q1,q2,q3\na,1,0,1\nquiet,,,\nb,0,,1\n", encoding="utf-8")
    kept, notes = answered_subjects(read_responses(path))
    assert kept.subject_ids == ("a", "b") and kept.item_ids == ("q1", "q2", "q3")
    assert notes == ["1 of 3 subjects answered no item (e.g. quiet); left out"]
    scored, notes = answered_subjects(read_scored_responses(path))
    assert scored.subject_ids == ("a", "b") and len(notes) == 1
    same, none = answered_subjects(kept)
    assert same is kept and none == []


def _predictions(truth: list[float], predicted: list[list[float]]) -> Predictions:
    pred = np.array(predicted, dtype=float)
    return Predictions(
        policy="random",
        length=5,
        predictor="plug-in",
        subject=np.arange(len(truth)),
        predicted=pred,
        truth=np.array(truth, dtype=float),
        half_width=np.full_like(pred, 0.1),
        low=pred - 0.1,
        high=pred + 0.1,
    )


@pytest.mark.parametrize(
    ("truth", "predicted", "reason"),
    [
        ([0.4, 0.6], [[0.5, 0.7], [0.3, 0.6]], "at least 3"),
        ([0.5, 0.5, 0.5], [[0.4, 0.6, 0.5]], "same accuracy"),
        ([0.2, 0.5, 0.8], [[0.5, 0.5, 0.5], [0.4, 0.4, 0.4]], "predictions are all equal"),
    ],
)
def test_an_undefined_rank_correlation_is_none_with_its_reason(
    truth: list[float], predicted: list[list[float]], reason: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Mean of empty slice", no ConstantInputWarning
        row = ValidationRow.model_validate(_predictions(truth, predicted).metrics())
    assert row.kendall_tau is None and row.spearman is None and row.kendall_tau_sd is None
    assert row.null_reasons is not None and reason in row.null_reasons["kendall_tau"]
    assert row.mae is not None and math.isfinite(row.mae)
    refuse_nan(row, "the row")  # None is not NaN
    defined = ValidationRow.model_validate(
        _predictions([0.2, 0.5, 0.8], [[0.3, 0.4, 0.9]]).metrics()
    )
    assert defined.kendall_tau == pytest.approx(1.0) and defined.null_reasons is None


def test_a_nan_figure_is_an_error_naming_it() -> None:
    row = ValidationRow.model_validate(
        _predictions([0.2, 0.5, 0.8], [[0.3, math.nan, 0.9]]).metrics()
    )
    with pytest.raises(CatError, match=r"no number for mae of random/plug-in at 5 items"):
        refuse_nan(row, "random/plug-in at 5 items")


def test_a_verdict_without_tau_says_n_a() -> None:
    def row(policy: str, predictor: str, tau: float | None) -> ValidationRow:
        return ValidationRow(
            policy=policy,
            length=30,
            predictor=predictor,
            n_subjects=3,
            kendall_tau=tau,
            spearman=tau,
            mae=0.02,
            rmse=0.03,
            coverage=0.9,
            mean_interval_width=0.1,
        )

    (verdict,) = verdicts([row("default", "chosen", None), row("random", "plug-in", 0.5)])
    assert verdict.kendall_tau == "n/a" and verdict.default_kendall_tau is None
    assert "default τ n/a vs best random .500" in verdict.line()
