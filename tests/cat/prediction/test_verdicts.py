"""The verdict per length: the default against the best random row, in the JSON and the
CLI's lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from cat.cli.app import app
from cat.prediction.verdicts import ValidationRow, verdicts
from irt.simulate import random_params, simulate_responses
from itempool.formats.responses import write_jsonl

runner = CliRunner()


def _row(policy: str, predictor: str, length: int, tau: float, mae: float) -> ValidationRow:
    return ValidationRow(
        policy=policy,
        length=length,
        predictor=predictor,
        n_subjects=10,
        kendall_tau=tau,
        spearman=tau,
        mae=mae,
        rmse=mae,
        coverage=0.9,
        mean_interval_width=0.1,
    )


def test_the_default_against_the_best_random_row() -> None:
    rows = [
        _row("default", "chosen", 250, 0.935, 0.0153),
        _row("mfi", "ridge", 250, 0.990, 0.0010),  # not random: never the yardstick
        _row("random", "plug-in", 250, 0.923, 0.0148),
        _row("random", "ridge", 250, 0.911, 0.0211),
        _row("random-raw", "raw", 250, 0.895, 0.0240),
        _row("default", "chosen", 30, 0.800, 0.0300),
        _row("random", "chosen", 30, 0.700, 0.0400),
        _row("random-raw", "raw", 30, 0.800, 0.0600),
        _row("mfi", "plug-in", 100, 0.9, 0.02),  # no default at 100: no verdict
        _row("random-raw", "raw", 100, 0.8, 0.03),
    ]
    at30, at250 = verdicts(rows)
    assert at250.line() == (
        "250 items: default τ .935 vs best random .923 (random/plug-in): better; "
        "MAE .0153 vs .0148 (random/plug-in): worse"
    )
    assert at250.best_random_mae_row == "random/plug-in" and not at250.beats_random
    assert (at30.length, at30.kendall_tau, at30.mae) == (30, "tied", "better")
    assert at30.best_random_kendall_tau_row == "random-raw"
    assert at30.best_random_mae_row == "random/chosen"
    assert verdicts([r for r in rows if r.policy != "default"]) == []


def test_cat_validate_prints_one_verdict_line_per_length(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    data = simulate_responses(random_params(120, rng, "3pl"), rng.normal(size=30), rng)
    path, out = tmp_path / "r.jsonl", tmp_path / "valid.json"
    write_jsonl(data, path)
    args = ["validate", str(path), "--lengths", "10,30", "--repeats", "2", "--out", str(out)]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["settings"]["policies"] == ["default"]
    assert [(v["length"], v["policy"]) for v in written["verdicts"]] == [
        (10, "default"),
        (30, "default"),
    ]
    for verdict in written["verdicts"]:
        assert verdict["kendall_tau"] in ("better", "tied", "worse")
        assert verdict["mae"] in ("better", "tied", "worse")
        assert verdict["best_random_mae"] == min(
            r["mae"]
            for r in written["results"]
            if r["length"] == verdict["length"] and r["policy"] in ("random", "random-raw")
        )
    lines = [line for line in result.output.splitlines() if " items: default τ " in line]
    assert [line.split()[0] for line in lines] == ["10", "30"]
