"""``cat calibrate --model crm|beta``: scores in [0, 1] through the command line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from itempool.formats.continuous_params import read_continuous_params
from itempool.formats.scores import write_continuous_jsonl

runner = CliRunner()
N_ITEMS = 12


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(4)
    truth = ContinuousParams.create(
        "beta", rng.lognormal(0.0, 0.3, N_ITEMS), rng.normal(0, 1, N_ITEMS), [2.0] * N_ITEMS
    )
    values = truth.simulate(rng.normal(size=300), rng)
    values[0, 0], values[1, 1] = 0.0, 1.0  # a similarity of exactly 0 and of exactly 1
    values[rng.random(values.shape) < 0.05] = np.nan
    path = tmp_path_factory.mktemp("continuous") / "similarity.jsonl"
    write_continuous_jsonl(ContinuousResponses.from_array(values, item_ids=truth.item_ids), path)
    return path


def _outside(path: Path, epsilon: float) -> int:
    values = [v for line in path.open() for v in json.loads(line)["responses"].values()]
    return sum(v < epsilon or v > 1 - epsilon for v in values)


def _one_line(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("model", ["beta", "crm"])
def test_writes_params_report_and_abilities(scores: Path, tmp_path: Path, model: str) -> None:
    out, report, abilities = tmp_path / "p.csv", tmp_path / "fit.json", tmp_path / "a.csv"
    args = ["calibrate", str(scores), "--model", model, "--out", str(out)]
    result = runner.invoke(app, [*args, "--report", str(report), "--abilities", str(abilities)])
    assert result.exit_code == 0, result.output
    title = "Beta IRT" if model == "beta" else "Continuous response model"
    assert f"{title} calibration (em)" in result.output
    fit = json.loads(report.read_text())
    # The 0 and the 1, and every drawn score nearer than ε to them.
    clipped = _outside(scores, 0.001)
    assert fit["n_clipped"] == clipped >= 2
    text = " ".join(result.output.split())
    assert f"clipped to [ε, 1 − ε] │ {clipped} scores (ε = 0.001)" in text
    params = read_continuous_params(out)
    assert params.n_items == N_ITEMS and {t.value for t in params.item_types} == {model}
    for key in ("model", "method", "n_subjects", "n_items", "loglik", "n_iter", "converged"):
        assert key in fit
    assert fit["model"] == model and fit["n_subjects"] == 300
    assert fit["epsilon"] == 0.001 and fit["standard_errors"] == "oakes"
    assert fit["priors"]["a"]["dist"] == "lognormal"  # weakly informative by default
    # Only the priors on parameters these items have.
    assert set(fit["priors"]) == {"a", "d", "log_sigma" if model == "crm" else "tau"}
    assert set(fit["parameters"]) == {"a", "d", "sigma" if model == "crm" else "tau"}
    with abilities.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 300 and rows[0]["method"] == "eap"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pool", "."], "--pool (pools do not take continuous items yet; write --out)"),
        (["--guessing"], "--guessing does not apply to --model beta"),
        (["--scoring", "map"], "--scoring map (the abilities are EAP) does not apply"),
        (["--collapse-scores"], "--collapse-scores does not apply to --model beta"),
        (["--standard-errors", "xpd"], "--standard-errors xpd is not available"),
    ],
)
def test_flags_that_do_not_apply_fail_in_one_line(
    scores: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "p.csv"
    args = ["calibrate", str(scores), "--model", "beta", "--out", str(out), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert message in _one_line(result.output)
    assert not out.exists()


def test_bad_scores_and_validate_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"subject_id": "m1", "responses": {"q1": 1.5}}\n')
    result = runner.invoke(app, ["calibrate", str(bad), "--model", "crm", "--out", "p.csv"])
    line = _one_line(result.output)
    assert line.startswith("error: bad.jsonl line 1") and "1.5" in line
    result = runner.invoke(app, ["validate", str(bad), "--model", "beta", "--out", "v.json"])
    assert "--model beta (scores in [0, 1]) is for cat calibrate only" in _one_line(result.output)
