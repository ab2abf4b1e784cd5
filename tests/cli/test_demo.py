"""``cat demo``: the whole method offline, through real HTTP, on the shipped demo pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.cli.demo import DEMO_POOL

runner = CliRunner()


@pytest.mark.slow
def test_demo_ranks_new_models_beside_the_truth(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    result = runner.invoke(
        app, ["demo", "--work", str(work), "--items", "120", "--length", "40", "--seed", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "synthesis: 25 participants" in result.output and "New models after" in result.output
    report = json.loads((work / "demo.json").read_text())
    rows = report["assessed"]
    assert [r["model"] for r in rows] == ["new-strong", "new-middle", "new-weak"]
    estimated = [r["result"]["theta"] for r in rows]
    assert estimated[0] > estimated[1] > estimated[2]  # the order of the true abilities
    for r in rows:
        rank = r["result"]["rank"]
        assert rank["of"] == 26 and abs(rank["position"] - r["true_rank"]) <= 6
        assert abs(r["result"]["predicted_accuracy"]["value"] - r["true_accuracy"]) < 0.1
    assert (work / "pool" / "params.csv").is_file() and (work / "synth.db").is_file()
    assert DEMO_POOL.is_dir()
