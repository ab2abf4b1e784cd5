"""``cat leaderboard`` through the command line, on RESULT.json files ``cat assess`` wrote."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
DEMO, DEMO_EN = ROOT / "item_pools" / "demo", ROOT / "item_pools" / "demo-en"


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two runs of ``cat assess`` on the demo pool: sim:0.2 and sim:1.2."""
    folder = tmp_path_factory.mktemp("runs")
    for theta in ("0.2", "1.2"):
        out = folder / f"sim{theta}.json"
        code, output = _run(
            "assess", "--pool", str(DEMO), "--model", f"sim:{theta}", "--length", "20",
            "--out", str(out),
        )  # fmt: skip
        assert code == 0, output
    return folder


def test_a_folder_of_runs_with_references_table_and_page(runs: Path, tmp_path: Path) -> None:
    table, page = tmp_path / "board.csv", tmp_path / "board.html"
    code, output = _run(
        "leaderboard", str(runs), "--references", "--out", str(table), "--html", str(page)
    )
    assert code == 0, output
    lines = output.splitlines()
    assert "Leaderboard on demo v1 (2,400 items)" in lines[0]
    rows = [line.split() for line in lines if line.strip().split(" ")[0].isdigit()]
    models = [row[1] for row in rows]
    assert models.index("sim:1.2") < models.index("sim:0.2")
    assert len(rows) == 2 + 40 and sum(row[2] == "(ref)" for row in rows) == 40
    assert "every run reached its maximum length" in output
    assert f"table written to {table}" in output and f"page written to {page}" in output
    with table.open(encoding="utf-8", newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [r["model"] for r in written if r["kind"] == "model"] == ["sim:1.2", "sim:0.2"]
    assert page.read_text(encoding="utf-8").count('src="data:image/png;base64,') == 1


def test_settings_that_differ_and_a_model_run_twice(runs: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    code, output = _run(
        "assess", "--pool", str(DEMO), "--model", "sim:0.2", "--length", "25",
        "--seed", "4", "--out", str(again),
    )  # fmt: skip
    assert code == 0, output
    code, output = _run("leaderboard", str(runs), str(again), "--out", str(tmp_path / "b.json"))
    assert code == 0, output
    assert "Settings that differ between the runs" in output
    assert "note: sim:0.2 has 2 runs, all kept as separate rows" in output
    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert data["differing_settings"] == ["max_items", "seed"]
    assert sorted(r["label"] for r in data["rows"]) == [
        "sim:0.2 (again)",
        "sim:0.2 (sim0.2)",
        "sim:1.2",
    ]


def _one_line_error(code: int, output: str) -> str:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


def test_runs_on_two_pools_are_one_line_naming_both(runs: Path, tmp_path: Path) -> None:
    other = tmp_path / "en.json"
    code, output = _run(
        "assess", "--pool", str(DEMO_EN), "--model", "sim:0", "--length", "5", "--out", str(other)
    )
    assert code == 0, output
    line = _one_line_error(*_run("leaderboard", str(runs / "sim0.2.json"), str(other)))
    assert "different pools" in line and "demo v1" in line and "demo-en v1" in line
    assert str(other) in line


def test_bad_input_fails_in_one_line_before_work(runs: Path, tmp_path: Path) -> None:
    not_result = tmp_path / "params.json"
    not_result.write_text('{"a": 1}', encoding="utf-8")
    line = _one_line_error(*_run("leaderboard", str(runs), str(not_result)))
    assert f"{not_result}: not a RESULT.json of cat assess (" in line
    # the table's suffix is checked before anything is read
    line = _one_line_error(*_run("leaderboard", "missing.json", "--out", "board.txt"))
    assert "board.txt: the table is written as .csv or .json" in line
    line = _one_line_error(
        *_run("leaderboard", str(runs), "--html", str(tmp_path / "no" / "such" / "p.html"))
    )
    assert line.startswith("error: --html ")
    assert "no such file" in _one_line_error(*_run("leaderboard", str(tmp_path / "none")))
