"""A pool with continuous items (open items scored in [0, 1]) end to end: calibrated in
place from one mixed response file, checked, described, and assessed (simulated,
replayed, and live through the local server)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.assessment.assess import assess
from cat.assessment.examinees import EndpointExaminee, ReplayExaminee, SimulatedExaminee
from cat.cli.app import app
from cat.pools.loading import load_pool
from irt.mixed import MixedParams
from synth.backend import OpenAIBackend
from synth.local_server import LocalServer
from tests.cli.mixed_pool_files import write_mixed_pool

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = write_mixed_pool(tmp_path_factory.mktemp("mixed"))
    args = ["calibrate", str(made["answers"]), "--model", "graded", "--pool", str(made["pool"])]
    result = runner.invoke(app, [*args, "--cross-fit-lengths", "10,30"])
    assert result.exit_code == 0, result.output
    made["output"] = Path(made["pool"].parent / "calibrate.txt")
    made["output"].write_text(result.output)
    return made


def _copy(pool: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "pool"
    shutil.copytree(pool, copy)
    return copy


def test_the_pool_is_calibrated_in_place(files: dict[str, Path]) -> None:
    pool = files["pool"]
    assert (pool / "continuous_params.csv").is_file() and (pool / "params.csv").is_file()
    manifest = json.loads((pool / "pool.json").read_text())
    assert manifest["calibration"]["model"] in ("graded+beta", "graded+crm")
    assert manifest["calibration"]["item_types"] == {
        "3PL": 15,
        manifest["calibration"]["model"].split("+")[1]: 15,
        "graded": 15,
    }
    assert set(manifest["prediction_errors"]["errors"]) == {"10", "30"}
    assert "cross-fit (5 folds, 30 items" in files["output"].read_text()
    loaded = load_pool(pool)
    assert isinstance(loaded.params, MixedParams)
    assert set(loaded.params.continuous_ids) == {f"text{k:02d}" for k in range(15)}
    check = runner.invoke(app, ["pool", "validate", str(pool)])
    assert check.exit_code == 0 and "no problems" in check.output
    info = runner.invoke(app, ["pool", "info", str(pool)])
    assert info.exit_code == 0, info.output


def test_a_simulated_model_gets_an_honest_prediction(files: dict[str, Path]) -> None:
    pool = load_pool(files["pool"])
    result = assess(pool, SimulatedExaminee(theta=0.9, seed=4), length=30, seed=1)
    assert result.pool.scored
    accuracy = result.predicted_accuracy
    assert result.truth is not None
    assert accuracy.low <= result.truth.accuracy <= accuracy.high
    continuous = [i for i in result.items if i.id.startswith("text")]
    assert continuous and all(isinstance(i.response, float) for i in continuous)
    assert all(0.0 <= float(i.response or 0) <= 1.0 for i in continuous)
    others = [i for i in result.items if not i.id.startswith("text")]
    assert all(isinstance(i.response, int) for i in others)


def test_a_replayed_model_answers_with_its_recorded_scores(files: dict[str, Path]) -> None:
    pool = load_pool(files["pool"])
    examinee = ReplayExaminee(files["new"], "new-strong")
    result = assess(pool, examinee, length=30, seed=1)
    line = next(
        json.loads(row) for row in files["new"].read_text().splitlines() if '"new-strong"' in row
    )
    recorded = line["responses"]
    for item in result.items:
        assert item.response == pytest.approx(recorded[item.id])
    truth = np.mean([v / (4 if k.startswith("calc") else 1) for k, v in recorded.items()])
    assert result.truth is not None
    assert result.truth.accuracy == pytest.approx(truth)


def test_a_live_model_is_graded_by_the_metric_on_continuous_items(
    files: dict[str, Path], tmp_path: Path
) -> None:
    pool = load_pool(files["pool"])
    with LocalServer(pool.items, {"m": 0.6}, judges={"fair": "fair"}, seed=3) as server:
        url = server.base_url
        examinee = EndpointExaminee(
            "m",
            backend=OpenAIBackend(url, timeout=30.0),
            store=tmp_path / "m.db",
            judge_model=f"fair@{url}",
            judge_backend=OpenAIBackend(url, timeout=30.0),
        )
        result = assess(pool, examinee, length=30, seed=2)
    continuous = [i for i in result.items if i.id.startswith("text")]
    assert continuous
    assert all(i.response is None or 0.0 <= i.response <= 1.0 for i in continuous)
    # A similarity is kept as it is: some scores are fractions, never cut into points.
    assert any(i.response not in (0, 1, None) for i in continuous)
    # The judge grades the open items scored in points only.
    points_items = sum(i.id.startswith("calc") for i in result.items)
    assert result.usage is not None
    assert result.usage.calls == len(result.items) + points_items


def test_a_continuous_score_outside_zero_one_names_the_file_and_line(
    files: dict[str, Path], tmp_path: Path
) -> None:
    pool = _copy(files["pool"], tmp_path)
    bad = tmp_path / "bad.jsonl"
    rows = files["answers"].read_text().splitlines()
    row = json.loads(rows[2])
    row["responses"]["text03"] = 1.5
    rows[2] = json.dumps(row)
    bad.write_text("\n".join(rows) + "\n")
    result = runner.invoke(app, ["calibrate", str(bad), "--model", "graded", "--pool", str(pool)])
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        f"error: bad.jsonl line 3: score of subject {row['subject_id']!r} on item 'text03' "
        "is 1.5; a continuous item's score is in [0, 1]"
    ]


def test_a_pool_without_its_continuous_params_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    pool = _copy(files["pool"], tmp_path)
    (pool / "continuous_params.csv").unlink()
    result = runner.invoke(app, ["pool", "validate", str(pool)])
    assert result.exit_code != 0
    assert "continuous_params.csv: missing: 15 item(s) of items.jsonl are continuous" in (
        " ".join(result.output.split())
    )


def test_a_continuous_params_file_with_a_wrong_item_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    pool = _copy(files["pool"], tmp_path)
    path = pool / "continuous_params.csv"
    path.write_text(path.read_text().replace("text07,", "calc07,"))
    result = runner.invoke(app, ["pool", "validate", str(pool)])
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "item 'calc07' is not a continuous item of items.jsonl" in text
    assert "no row for continuous item 'text07'" in text


def test_continuous_with_a_pool_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    pool = _copy(files["pool"], tmp_path)
    args = ["calibrate", str(files["answers"]), "--model", "graded", "--pool", str(pool)]
    result = runner.invoke(app, [*args, "--continuous", str(files["answers"])])
    assert result.exit_code != 0
    assert "leave out --continuous" in result.output
