"""``cat demo``: the whole method offline, through real HTTP, on the shipped demo pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from catdemo.command import DEMO_POOL

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
    # The default pool's open items: answered in free text, graded to scores, calibrated.
    assert all(r["result"]["pool"]["scored"] for r in rows) and "score (90%)" in result.output
    header = (work / "pool" / "params.csv").read_text().splitlines()[0]
    assert header.startswith("item_id,type,a,d1,d2,d3,d4,c")
    scores = [json.loads(line)["responses"] for line in (work / "responses.jsonl").open()]
    assert max(v for row in scores for v in row.values()) == 4  # explanations score 0..4
    given = [item["response"] for r in rows for item in r["result"]["items"]]
    assert any(g is not None and g > 1 for g in given)  # graded items were asked


@pytest.mark.slow
def test_demo_on_a_pool_of_choice_items_calibrates_a_3pl(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    pool = DEMO_POOL.parent / "demo-en"
    args = ["demo", "--pool", str(pool), "--work", str(work), "--items", "80", "--length", "20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "calibration: 3PL by EM on 25 participants" in result.output
    assert "accuracy (90%)" in result.output
    header = (work / "pool" / "params.csv").read_text().splitlines()[0]
    assert header == "item_id,a,b,c,d,se_a,se_b,se_c"
