"""``cat validate`` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from cat.cli.app import app
from irt.readers import write_jsonl
from irt.simulate import random_params, simulate_responses

runner = CliRunner()


def test_validate_writes_results_with_the_baseline(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    params = random_params(200, rng, "2pl")
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
    assert keys == {
        ("mfi", 10, "plug-in"),
        ("mfi", 40, "plug-in"),
        ("mfi", 10, "ridge"),
        ("mfi", 40, "ridge"),
        ("mfi", 10, "chosen"),
        ("mfi", 40, "chosen"),
        ("random-raw", 10, "raw"),
        ("random-raw", 40, "raw"),
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
