"""``cat validate`` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from cat.cli.app import app
from cat.validation.report import ValidationReport
from irt.simulate import random_params, simulate_responses
from itempool.formats.responses import write_jsonl

runner = CliRunner()


def test_validate_writes_results_with_the_baseline(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    params = random_params(100, rng, "2pl")
    data = simulate_responses(params, rng.normal(size=30), rng, missing_rate=0.1)
    path = tmp_path / "r.jsonl"
    write_jsonl(data, path)
    out = tmp_path / "valid.json"
    result = runner.invoke(
        app,
        [
            "validate",
            str(path),
            "--model",
            "2pl",
            "--lengths",
            "10,40",
            "--policies",
            "mfi",
            "--seed",
            "2",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    keys = {(r["policy"], r["length"], r["predictor"]) for r in report["results"]}
    predictors = ("plug-in", "ridge", "mixture", "low-rank", "chosen")
    assert keys == {
        *(("mfi", k, p) for k in (10, 40) for p in predictors),
        ("random-raw", 10, "raw"),
        ("random-raw", 40, "raw"),
        # random items with every predictor: always run, as the honest baseline
        *(("random", k, p) for k in (10, 40) for p in predictors),
    }
    for row in report["results"]:
        assert {"kendall_tau", "spearman", "mae", "rmse", "coverage"} <= set(row)
        assert 0 <= row["coverage"] <= 1
    assert report["settings"]["seed"] == 2 and len(report["subjects"]) == 9
    assert "random-raw" in result.output


def test_bad_lengths_and_policy(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rng = np.random.default_rng(1)
    write_jsonl(simulate_responses(random_params(20, rng, "2pl"), rng.normal(size=12), rng), path)
    out = str(tmp_path / "v.json")
    bad = runner.invoke(app, ["validate", str(path), "--lengths", "10,x", "--out", out])
    assert bad.exit_code == 2 and "whole numbers" in bad.output
    bad = runner.invoke(
        app,
        [
            "validate",
            str(path),
            "--policies",
            "best",
            "--model",
            "2pl",
            "--lengths",
            "5",
            "--out",
            out,
        ],
    )
    assert bad.exit_code == 2 and "unknown policy" in bad.output


def test_the_file_is_the_model_dump_and_lists_the_settings(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    data = simulate_responses(random_params(60, rng, "2pl"), rng.normal(size=12), rng)
    path = tmp_path / "r.jsonl"
    write_jsonl(data, path)
    out = tmp_path / "valid.json"
    args = ["validate", str(path), "--lengths", "5,10", "--policies", "random", "--seed", "1"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    report = ValidationReport.model_validate(written)  # extra="forbid": no key unknown
    assert json.loads(json.dumps(report.model_dump(mode="json"))) == written
    assert list(written) == [
        "results",
        "verdicts",
        "settings",
        "subjects",
        "created",
        "data_notes",
    ]
    settings = written["settings"]
    assert settings["package_version"] and settings["responses"] == str(path)
    assert settings["model"] == "3pl" and settings["lengths"] == [5, 10]
    assert settings["policies"] == ["random"] and settings["holdout"] == 0.3
    assert {(r["policy"], r["length"]) for r in written["results"]} >= {
        ("random-raw", 5),
        ("random-raw", 10),
    }
    subject = written["subjects"][0]
    assert {"subject_id", "truth", "random/plug-in@5", "random-raw/raw@10"} <= set(subject)


def test_help_example_names_data_that_ship() -> None:
    result = runner.invoke(app, ["validate", "--help"], terminal_width=200)
    assert result.exit_code == 0 and "examples/responses.jsonl" in result.output
    assert (Path(__file__).resolve().parents[2] / "examples/responses.jsonl").is_file()


def test_empty_lengths_is_one_line(tmp_path: Path) -> None:
    bad = runner.invoke(
        app,
        [
            "validate",
            str(tmp_path / "r.jsonl"),
            "--lengths",
            ",",
            "--out",
            str(tmp_path / "v.json"),
        ],
    )
    assert bad.exit_code == 2 and "--lengths must be positive" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_scenarios_give_the_default_per_scenario_intervals(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    params = random_params(120, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=30), rng)
    path, items = tmp_path / "r.jsonl", tmp_path / "items.csv"
    write_jsonl(data, path)
    names = ("algebra", "ethics", "dosing")
    items.write_text(
        "id,topic\n" + "".join(f"{item},{names[j % 3]}\n" for j, item in enumerate(data.item_ids))
    )
    out = tmp_path / "valid.json"
    args = ["validate", str(path), "--lengths", "40", "--repeats", "1", "--out", str(out)]
    result = runner.invoke(app, [*args, "--scenarios", str(items), "--scenario-column", "topic"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["scenarios"] == sorted(names)
    (default,) = [r for r in report["results"] if r["policy"] == "default"]
    assert len(default["scenario_coverage"]) == 3 and len(default["scenario_mae"]) == 3
    assert all(0 <= c <= 1 for c in default["scenario_coverage"])
    assert default["scenario_coverage_min"] == min(default["scenario_coverage"])
    assert "40 items: default per scenario, coverage" in result.output
    # Random items are not scored per scenario.
    assert all(r["scenario_coverage"] is None for r in report["results"] if r["policy"] == "random")


def test_model_bifactor_replays_the_bifactor_design_beside_the_others(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    params = random_params(60, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=24), rng)
    path, items = tmp_path / "r.jsonl", tmp_path / "items.csv"
    write_jsonl(data, path)
    names = ("algebra", "ethics", "dosing")
    items.write_text(
        "id,topic\n" + "".join(f"{item},{names[j % 3]}\n" for j, item in enumerate(data.item_ids))
    )
    out = tmp_path / "valid.json"
    args = ["validate", str(path), "--lengths", "20", "--repeats", "1", "--out", str(out)]
    args += ["--model", "bifactor", "--folds", "3", "--policies", "default,bifactor"]
    result = runner.invoke(app, [*args, "--scenarios", str(items), "--scenario-column", "topic"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["multidimensional"] == "bifactor"
    assert report["settings"]["model"] == "3pl" and report["settings"]["holdout"] is None
    assert report["settings"]["folds"] == 3  # the run can be repeated from its settings
    (bifactor,) = [r for r in report["results"] if r["policy"] == "bifactor"]
    assert bifactor["predictor"] == "bifactor" and bifactor["n_subjects"] == 24
    assert len(bifactor["scenario_mae"]) == 3
    # Accuracies of 3PL examinees on 60 items: a working design errs a few points.
    assert bifactor["mae"] < 0.1
    without = runner.invoke(app, args)
    assert without.exit_code == 2 and "needs each item's scenario" in without.output
    # The mirt design under a named criterion, recorded in the report.
    base = ["validate", str(path), "--lengths", "20", "--repeats", "1", "--out", str(out)]
    base += ["--folds", "3", "--scenarios", str(items), "--scenario-column", "topic"]
    mirt = [*base, "--model", "mirt", "--policies", "mirt", "--criterion", "kl"]
    result = runner.invoke(app, mirt)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["multidimensional"] == "mirt"
    assert report["settings"]["criterion"] == "kl"
    (row,) = [r for r in report["results"] if r["policy"] == "mirt"]
    assert row["mae"] < 0.1 and len(row["scenario_mae"]) == 3
    # Random items are scored by the mirt predictor too: the honest baseline.
    (same,) = [r for r in report["results"] if r["policy"] == "random" and r["predictor"] == "mirt"]
    assert same["mae"] < 0.15 and same["n_subjects"] == 24
    refused = runner.invoke(app, [*base, "--criterion", "kl"])
    assert refused.exit_code == 2 and "is for a multidimensional design" in refused.output


def test_a_subject_without_answers_is_left_out_and_no_figure_is_nan(tmp_path: Path) -> None:
    """A subject that answered no item is dropped with one note (cat calibrate's
    words) instead of turning every figure into nan; nothing is printed or written as
    nan."""
    rng = np.random.default_rng(3)
    data = simulate_responses(random_params(25, rng, "2pl"), rng.normal(size=12), rng)
    path = tmp_path / "r.jsonl"
    write_jsonl(data, path)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"subject_id": "silent", "responses": {}}) + "\n")
    out = tmp_path / "valid.json"
    result = runner.invoke(
        app,
        [
            *("validate", str(path), "--model", "2pl", "--lengths", "5"),
            *("--policies", "mfi", "--repeats", "1", "--interval-folds", "2"),
            *("--seed", "1", "--out", str(out)),
        ],
    )
    assert result.exit_code == 0, result.output
    note = "1 of 13 subjects answered no item (e.g. silent); left out"
    assert f"note: {note}" in result.output
    assert "nan" not in result.output.lower() and "empty slice" not in result.output
    text = out.read_text()
    assert "NaN" not in text
    report = json.loads(text)
    assert report["data_notes"] == [note] and report["settings"]["n_subjects"] == 12
    assert "silent" not in {s["subject_id"] for s in report["subjects"]}
    for row in report["results"]:
        assert row["kendall_tau"] is not None and row["mae"] >= 0
        assert row["mean_interval_width"] >= 0


def _small_file(tmp_path: Path, n: int = 20) -> Path:
    rng = np.random.default_rng(5)
    path = tmp_path / "r.jsonl"
    write_jsonl(simulate_responses(random_params(50, rng, "3pl"), rng.normal(size=n), rng), path)
    return path


def test_train_size_and_splits_report_the_mean_and_sd_over_draws(tmp_path: Path) -> None:
    path, out = _small_file(tmp_path), tmp_path / "v.json"
    fast = ["--lengths", "5", "--policies", "mfi", "--repeats", "1", "--interval-folds", "2"]
    result = runner.invoke(
        app,
        ["validate", str(path), *fast, "--train-size", "12", "--splits", "2", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "every row: mean ± sd over 2 draws of 12 training subjects" in result.output
    report = ValidationReport.model_validate_json(out.read_text())
    settings = report.settings
    assert (settings.train_size, settings.splits, settings.holdout) == (12, 2, None)
    assert all(r.splits == 2 and r.n_subjects == 8 for r in report.results)
    mfi = next(r for r in report.results if (r.policy, r.predictor) == ("mfi", "plug-in"))
    assert mfi.mae_sd is not None and mfi.coverage_sd is not None
    # Every subject held out in either draw has its predictions, averaged over those draws.
    assert 8 <= len(report.subjects) <= 16
    one = runner.invoke(
        app, ["validate", str(path), *fast, "--train-size", "12", "--out", str(out)]
    )
    assert one.exit_code == 0, one.output
    single = ValidationReport.model_validate_json(out.read_text())
    assert single.settings.splits == 1 and all(r.splits == 1 for r in single.results)
    assert len(single.subjects) == 8 and "draws of 12" not in one.output


def test_train_size_refuses_other_splits_and_sizes_out_of_range(tmp_path: Path) -> None:
    path, out = _small_file(tmp_path), str(tmp_path / "v.json")
    base = ["validate", str(path), "--lengths", "5", "--policies", "mfi", "--out", out]
    for other, flag in (
        (["--holdout", "0.5"], "--holdout"),
        (["--folds", "3"], "--folds"),
        (["--leave-one-out"], "--leave-one-out"),
    ):
        bad = runner.invoke(app, [*base, "--train-size", "12", *other])
        assert bad.exit_code == 2, bad.output
        assert f"chooses the held-out subjects itself: drop {flag}" in bad.output
    bad = runner.invoke(app, [*base, "--splits", "3"])
    assert bad.exit_code == 2 and "give --train-size" in bad.output
    bad = runner.invoke(app, [*base, "--train-size", "5"])
    assert bad.exit_code == 2 and "--train-size must be at least 10, got 5" in bad.output
    bad = runner.invoke(app, [*base, "--train-size", "18"])
    assert bad.exit_code == 2 and "leaves 2 held out; at most 17" in bad.output
    bad = runner.invoke(app, [*base, "--train-size", "12", "--splits", "0"])
    assert bad.exit_code == 2 and "--splits" in bad.output
    assert not Path(out).exists()
