"""The pool commands on a pool of scored items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from tests.cat.scored_pools import make_scored_pool

runner = CliRunner()


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scored_pool(tmp_path_factory.mktemp("scored") / "pool", n_items=60, n_refs=12)


def test_info_and_validate_describe_the_scored_items(pool_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["pool", "info", str(pool_dir), "--json", str(tmp_path / "i")])
    assert result.exit_code == 0, result.output
    assert "60 items, scored items (20 3PL, 40 graded)" in result.output
    figures = json.loads((tmp_path / "i").read_text())
    assert figures["pool"]["model"] == "mixed"
    assert figures["pool"]["item_types"] == {"3PL": 20, "graded": 40}
    assert figures["items"]["by_type"]["open"] == 40
    result = runner.invoke(app, ["pool", "validate", str(pool_dir)])
    assert result.exit_code == 0 and "no problems" in result.output


def test_assess_writes_a_result_and_a_report(pool_dir: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "r.json", tmp_path / "report"
    args = ["assess", "--pool", str(pool_dir), "--model", "sim:-0.4", "--length", "25"]
    result = runner.invoke(app, [*args, "--out", str(out), "--report", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["n_items"] == 25 and len(data["items"]) == 25
    assert data["pool"]["scored"] is True
    assert "predicted score" in result.output and "predicted accuracy" not in result.output
    tops = {
        json.loads(line)["id"]: json.loads(line).get("max_score", 1)
        for line in (pool_dir / "items.jsonl").read_text().splitlines()
    }
    assert all(0 <= item["response"] <= tops[item["id"]] for item in data["items"])
    assert [p.name for p in report.iterdir()] == ["index.html"]  # plots inline
    page = (report / "index.html").read_text()
    assert "Predicted score on the whole pool" in page and "Predicted accuracy" not in page


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["pool", "fit", "{pool}", "{scores}"], "cat pool fit"),
        (["recalibrate", "--pool", "{pool}", "{scores}", "--out", "{tmp}/new"], "cat recalibrate"),
        (["pool", "diff", "{pool}", "{pool}"], "cat pool diff"),
    ],
)
def test_commands_for_binary_pools_refuse_in_one_line(
    pool_dir: Path, tmp_path: Path, command: list[str], name: str
) -> None:
    places = {"pool": str(pool_dir), "scores": str(pool_dir.parent / "scores.jsonl")}
    args = [part.format(tmp=tmp_path, **places) for part in command]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert " ".join(result.output.split()) == (
        f"error: {name} works on pools of 0/1 items; pool {pool_dir} holds scored items "
        "(graded, partial-credit or open)"
    )


def _scores_with(pool_dir: Path, tmp_path: Path, subject: str, item: str, score: int) -> Path:
    """The references' scores with one score replaced: a grading error."""
    lines = (pool_dir.parent / "scores.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["subject_id"] == subject:
            record["responses"][item] = score
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("command", ["assess", "calibrate"])
def test_a_score_above_the_pools_top_names_the_item_and_line(
    pool_dir: Path, tmp_path: Path, command: str
) -> None:
    # q000 is graded 0..3 in the pool; without a pool a 9 would only add categories.
    scores = _scores_with(pool_dir, tmp_path, "ref03", "q000", 9)
    if command == "assess":
        args = ["assess", "--pool", str(pool_dir), "--model", f"replay:{scores}#ref03"]
        args += ["--out", str(tmp_path / "r.json")]
    else:
        args = ["calibrate", str(scores), "--model", "graded", "--pool", str(pool_dir)]
        args += ["--no-cross-fit"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        "error: scores.jsonl line 4: item 'q000' allows scores 0..3, got 9 (subject 'ref03')"
    )


def test_assess_longer_than_the_pool_says_the_pool_ran_out(pool_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["assess", "--pool", str(pool_dir), "--model", "sim:0.2", "--length", "500"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "60 of 60; stopped: pool_exhausted" in " ".join(result.output.split())
    data = json.loads(out.read_text())
    assert data["n_items"] == 60 and data["stop_reason"] == "pool_exhausted"
