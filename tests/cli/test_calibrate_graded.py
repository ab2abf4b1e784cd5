"""``cat calibrate --model graded|gpcm|sequential|nominal`` through the command line: the
files, the summary, R mirt's Science data, and every flag or input it refuses in one
line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from cat.cli.app import app
from irt.polytomous import PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_estep import polytomous_log_likelihood
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.formats.responses import read_scored_responses, write_scored_jsonl
from tests.cat.pools.test_graded_calibration import (
    MIRT_SCIENCE_GRADED,
    N_BINARY,
    N_GRADED,
    REPORT_KEYS,
    simulate,
    truth,
    write_simulated,
)
from tests.cat.scored_pools import make_scored_pool

runner = CliRunner()


@pytest.fixture
def scores(tmp_path: Path) -> Path:
    return write_simulated(tmp_path / "scores.jsonl")[0]


def _one_line_error(result: Result) -> str:
    """The error line of a failed run, after checking that it is the only one."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in result.output
    return lines[0]


def test_writes_params_report_and_abilities(scores: Path, tmp_path: Path) -> None:
    out, report, abil = tmp_path / "p.csv", tmp_path / "r.json", tmp_path / "a.csv"
    args = ["calibrate", str(scores), "--model", "graded", "--out", str(out)]
    args += ["--report", str(report), "--abilities", str(abil), "--seed", "7"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    params = read_polytomous_params(out)
    assert params.n_items == N_GRADED + N_BINARY and params.se_a is not None
    with out.open() as fh:
        assert next(csv.reader(fh))[:7] == ["item_id", "type", "a", "d1", "d2", "d3", "c"]
    fit = json.loads(report.read_text())
    assert set(fit) >= REPORT_KEYS
    assert fit["model"] == "graded" and fit["method"] == "em" and fit["seed"] == 7
    assert fit["item_types"] == {"2PL": N_BINARY, "graded": N_GRADED}
    assert fit["settings"]["guessing"] is False  # the default of the graded models
    with abil.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 600 and rows[0]["method"] == "eap"
    stdout = result.stdout
    assert "Graded response calibration (em)" in stdout
    for label in ("subjects x items", "categories", "item types", "AIC / BIC", "priors"):
        assert label in stdout
    assert "600 x 12" in stdout and "8 items with 4, 4 items with 2" in stdout
    assert "graded 8" in stdout and "a ~ lognormal(0, 0.5), d ~ normal(0, 3)" in stdout
    assert f"parameters written to {out}" in stdout
    assert result.stderr == ""


def test_gpcm_with_guessing_map_scores_and_no_errors(scores: Path, tmp_path: Path) -> None:
    out, report, abil = tmp_path / "p.csv", tmp_path / "r.json", tmp_path / "a.csv"
    args = ["calibrate", str(scores), "--model", "gpcm", "--guessing", "--scoring", "map"]
    args += ["--standard-errors", "none", "--out", str(out), "--report", str(report)]
    result = runner.invoke(app, [*args, "--abilities", str(abil)])
    assert result.exit_code == 0, result.output
    fit = json.loads(report.read_text())
    assert fit["item_types"] == {"3PL": N_BINARY, "gpcm": N_GRADED}
    assert fit["standard_errors"] is None and fit["priors"]["c"]["dist"] == "beta"
    assert read_polytomous_params(out).se_a is None
    with abil.open() as fh:
        assert next(csv.DictReader(fh))["method"] == "map"
    assert "Generalized partial credit calibration" in result.stdout
    assert "c ~ beta(3, 15)" in result.stdout and "c (3PL items)" in result.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "bayes"], "--method bayes does not apply to --model graded"),
        (["--groups", "g.csv"], "--groups does not apply to --model graded"),
        (["--dims", "2"], "--dims does not apply to --model graded"),
        (["--criterion", "kl"], "--criterion does not apply to --model graded"),
        (["--cross-fit", "3"], "--cross-fit stores its errors in a pool: give --pool DIR"),
        (["--scoring", "wle"], "--scoring wle is not available for graded models; use eap, map"),
    ],
)
def test_flags_that_do_not_apply_fail_naming_the_flag(
    scores: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "p.csv"
    args = ["calibrate", str(scores), "--model", "graded", "--out", str(out), *extra]
    assert _one_line_error(runner.invoke(app, args)) == f"error: {message}"
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--standard-errors", "xpd"], "--standard-errors applies to --model graded, gpcm"),
        (["--collapse-scores"], "--collapse-scores applies to --model graded, gpcm"),
    ],
)
def test_graded_flags_fail_on_other_models(
    scores: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    args = ["calibrate", str(scores), "--model", "2pl", "--out", str(tmp_path / "p.csv")]
    assert message in _one_line_error(runner.invoke(app, [*args, *extra]))


def test_bad_input_fails_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "p.csv"

    def run(path: Path, *extra: str) -> str:
        args = ["calibrate", str(path), "--model", "sequential", "--out", str(out), *extra]
        return _one_line_error(runner.invoke(app, args))

    assert "no such file" in run(tmp_path / "none.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"subject_id": "m", "responses": {"q1": -1}}\n')
    assert "broken.jsonl line 1" in run(broken)
    few, _ = simulate(truth(), 6)
    write_scored_jsonl(few, tmp_path / "few.jsonl")
    assert "6 subject(s) with answers; a graded calibration needs at least 10" in run(
        tmp_path / "few.jsonl"
    )
    assert "--out PARAMS.csv" in _one_line_error(
        runner.invoke(app, ["calibrate", str(broken), "--model", "graded"])
    )
    assert "does not exist" in run(broken, "--report", str(tmp_path / "no" / "r.json"))
    assert "tol must be positive" in run(broken, "--tol", "0")  # before reading the file
    assert not out.exists()


@pytest.mark.parametrize("model", ["gpcm", "nominal"])
def test_validate_replays_scores_with_the_graded_models(
    scores: Path, tmp_path: Path, model: str
) -> None:
    out = tmp_path / "v.json"
    args = ["validate", str(scores), "--model", model, "--lengths", "10", "--out", str(out)]
    result = runner.invoke(app, [*args, "--repeats", "2", "--interval-folds", "3"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["model"] == model
    policies = {(r["policy"], r["predictor"]) for r in report["results"]}
    assert policies == {("default", "chosen"), ("random", "plug-in"), ("random-raw", "raw")}
    assert "10 items: default τ" in result.output
    refused = ["validate", str(scores), "--model", "gpcm", "--criterion", "kl", "--out", "x"]
    line = _one_line_error(runner.invoke(app, refused))
    assert line == "error: --criterion is for --model bifactor or mirt, not gpcm"


def test_science_needs_collapse_scores_and_fits_as_the_calibrator(
    shared_data: Path, tmp_path: Path
) -> None:
    """Science: categories 1..4 and no id column. Without priors (as mirt) it is refused
    unless renumbered by --collapse-scores; then the fit is the calibrator's on scores
    0..3, at least as likely as mirt's coefficients."""
    science = shared_data / "human" / "polytomous" / "Science.csv"
    out, report = tmp_path / "p.csv", tmp_path / "r.json"
    base = ["calibrate", str(science), "--model", "graded", "--no-id-column", "--out", str(out)]
    base.append("--no-priors")
    line = _one_line_error(runner.invoke(app, base))
    assert "Science.csv: no answer on item 'Comfort' scores 0" in line
    assert "--collapse-scores" in line
    result = runner.invoke(app, [*base, "--collapse-scores", "--report", str(report)])
    assert result.exit_code == 0, result.output
    fit = json.loads(report.read_text())
    data = read_scored_responses(science, id_column=False).collapsed()
    direct = PolytomousCalibrator(standard_errors=None).fit(data)
    assert fit["loglik"] == pytest.approx(direct.loglik_, abs=1e-9)
    block = np.array(MIRT_SCIENCE_GRADED)
    mirt = PolytomousParams.create("graded", block[:, 0], block[:, 1:], item_ids=data.item_ids)
    assert fit["loglik"] >= polytomous_log_likelihood(data, mirt)
    assert fit["n_subjects"] == 392 and fit["renumbered_scores"]["Benefit"] == [1, 2, 3, 4]
    assert "note: scores renumbered on 4 of 4 items" in result.stdout
    assert "392 x 4" in result.stdout and "-1,608.869" in result.stdout


def test_a_pool_is_calibrated_on_its_items_scales_and_assessed(tmp_path: Path) -> None:
    pool = make_scored_pool(tmp_path / "pool", n_items=45, n_refs=24)
    for stale in ("params.csv", "reference.jsonl"):
        (pool / stale).unlink()
    scores = tmp_path / "scores.jsonl"
    args = ["calibrate", str(scores), "--model", "graded", "--pool", str(pool)]
    result = runner.invoke(app, [*args, "--cross-fit", "3", "--cross-fit-lengths", "10,30"])
    assert result.exit_code == 0, result.output
    assert "cross-fit (3 folds, 30 items, 24 reference models)" in result.output
    manifest = json.loads((pool / "pool.json").read_text())
    assert "model" not in manifest  # the item types are in params.csv
    assert manifest["calibration"]["model"] == "graded"
    assert manifest["calibration"]["item_types"] == {"3PL": 15, "graded": 30}
    errors = manifest["prediction_errors"]
    assert errors["policy"] == "mfi+cb" and set(errors["errors"]) == {"10", "30"}
    assert manifest["design_errors"]["irt"] == errors
    assert set(errors["scenario_errors"]["30"]) == {"dosing", "triage"}
    params = read_polytomous_params(pool / "params.csv")
    items = [json.loads(line) for line in (pool / "items.jsonl").read_text().splitlines()]
    assert [int(m) for m in params.max_scores] == [item.get("max_score", 1) for item in items]
    references = [json.loads(line) for line in (pool / "reference.jsonl").read_text().splitlines()]
    assert len(references) == 24 and all(0 <= r["accuracy"] <= 1 for r in references)
    out = tmp_path / "result.json"
    args = ["assess", "--pool", str(pool), "--model", "sim:0.5", "--length", "30"]
    assessed = runner.invoke(app, [*args, "--out", str(out)])
    assert assessed.exit_code == 0, assessed.output
    interval = json.loads(out.read_text())["accuracy_interval"]
    assert interval["method"].startswith("widened to the references' cross-fitted errors")
    assert interval["length"] == 30 and interval["references"] == 24


def test_a_score_above_the_pools_top_score_is_refused_with_its_line(tmp_path: Path) -> None:
    pool = make_scored_pool(tmp_path / "pool", n_items=15, n_refs=12)
    scores = tmp_path / "scores.jsonl"
    lines = scores.read_text().splitlines()
    row = json.loads(lines[3])
    row["responses"]["q000"] = 4  # q000 scores 0..3 in items.jsonl
    lines[3] = json.dumps(row)
    scores.write_text("\n".join(lines) + "\n")
    args = ["calibrate", str(scores), "--model", "graded", "--pool", str(pool)]
    message = _one_line_error(runner.invoke(app, args))
    assert message.startswith("error: scores.jsonl line 4")
    assert "'q000'" in message and "0..3" in message


def test_collapse_scores_is_refused_with_a_pool(tmp_path: Path) -> None:
    pool = make_scored_pool(tmp_path / "pool", n_items=15, n_refs=12)
    args = ["calibrate", str(tmp_path / "scores.jsonl"), "--model", "graded", "--pool", str(pool)]
    message = _one_line_error(runner.invoke(app, [*args, "--collapse-scores"]))
    assert message.startswith("error: --collapse-scores would move the pool's scores off")


def test_a_nominal_pool_is_calibrated_and_assessed(tmp_path: Path) -> None:
    """``--model nominal``: each item with 3+ scores gets Bock's nominal model, its free
    scoring values under the default N(l, 1) prior; the pool's params.csv adds them as
    ak columns and the pool assesses like any scored pool."""
    pool = make_scored_pool(tmp_path / "pool", n_items=45, n_refs=24)
    for stale in ("params.csv", "reference.jsonl"):
        (pool / stale).unlink()
    scores = tmp_path / "scores.jsonl"
    args = ["calibrate", str(scores), "--model", "nominal", "--pool", str(pool)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Nominal response calibration" in result.output
    assert "ak_l - l ~ normal(0, 1)" in result.output
    header = (pool / "params.csv").read_text().splitlines()[0].split(",")
    assert header[:12] == ["item_id", "type", "a", "d1", "d2", "d3", "d4", "c"] + [
        f"ak{k}" for k in range(1, 5)
    ]
    params = read_polytomous_params(pool / "params.csv")
    assert params.ak is not None
    nominal = [j for j, t in enumerate(params.item_types) if t.value == "nominal"]
    assert len(nominal) == 30
    top = params.max_scores[nominal].astype(int)
    assert np.all(params.ak[nominal, top - 1] == top)  # ak_m = m, as mirt fixes it
    assert np.all(np.abs(params.ak[nominal, 0]) < 5)  # held near the gpcm's by the prior
    calibration = json.loads((pool / "pool.json").read_text())["calibration"]
    assert calibration["model"] == "nominal"
    assert calibration["item_types"] == {"3PL": 15, "nominal": 30}
    out = tmp_path / "result.json"
    args = ["assess", "--pool", str(pool), "--model", "sim:0.5", "--length", "30"]
    assessed = runner.invoke(app, [*args, "--out", str(out)])
    assert assessed.exit_code == 0, assessed.output
    assert json.loads(out.read_text())["n_items"] == 30
