"""``cat pool`` through the command line: validate, info, import questions / lm-eval."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from cat.cli.pool import pool_app
from irt.readers import read_responses
from tests.cat.test_pool_format import BROKEN, write_broken_pool, write_clean_pool
from tests.cat.test_pool_import import MMLU_HEADER, mmlu_rows, sample, write_csv, write_samples

runner = CliRunner()
app = typer.Typer()
app.add_typer(pool_app, name="pool")


def invoke(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, ["pool", *map(str, args)])
    return result.exit_code, result.output


def test_validate_a_clean_pool(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool")
    code, output = invoke("validate", pool)
    assert code == 0, output
    assert output.strip() == f"pool {pool}: 5 items, no problems"


def test_validate_lists_every_problem_and_exits_2(tmp_path: Path) -> None:
    pool = write_broken_pool(tmp_path / "pool")
    code, output = invoke("validate", pool)
    assert code == 2
    lines = output.strip().splitlines()
    expected = [f"{f}:{n}" if n is not None else f for f, n, _ in BROKEN]
    assert [line.split(": ")[0] for line in lines[:-1]] == expected
    assert "items.jsonl:4: answer 'E' names options not offered: ['E']" in lines
    assert lines[-1] == f"pool {pool}: {len(BROKEN)} problems"


def test_validate_warnings_keep_exit_0(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool")
    params = pool / "params.csv"
    params.write_text(params.read_text().replace("q5,2.0,", "q5,11.0,"))
    code, output = invoke("validate", pool)
    assert code == 0
    assert output.splitlines() == [
        "params.csv:4: warning: a = 11.0 is unusually large (> 10)",
        f"pool {pool}: 5 items, no problems (1 warning)",
    ]


def test_validate_a_missing_folder(tmp_path: Path) -> None:
    code, output = invoke("validate", tmp_path / "nope")
    assert code == 2 and "no such folder" in output


def test_info_table_and_json(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool")
    out = tmp_path / "info.json"
    code, output = invoke("info", pool, "--json", out)
    assert code == 0, output
    for words in ("tiny v2 (en): 5 items, 3PL", "dosing", "units", "maximum information"):
        assert words in output
    assert "m-high" in output and "Reference subjects: 3" in output
    figures = json.loads(out.read_text())
    assert set(figures) == {"pool", "items", "parameters", "information", "reference"}
    assert figures["items"]["by_scenario"]["units"] == {
        "single": 2,
        "multi": 1,
        "order": 0,
        "total": 3,
    }
    assert figures["items"]["by_type"] == {"single": 4, "multi": 1, "order": 0}
    assert set(figures["parameters"]) == {"a", "b", "c"}
    assert abs(figures["parameters"]["a"]["max"] - 2.0) < 1e-12
    info = figures["information"]
    assert info["theta"] == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]
    assert len(info["values"]) == 7 and all(v > 0 for v in info["values"])
    assert info["max_value"] >= max(info["values"]) and -6 <= info["max_theta"] <= 6
    ref = figures["reference"]
    assert (ref["count"], ref["theta_min"], ref["theta_max"]) == (3, -1.2, 1.7)
    assert [r["subject_id"] for r in ref["top"]] == ["m-high", "m-mid", "m-low"]


def test_info_without_calibration_and_on_a_broken_pool(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool", calibrated=False)
    out = tmp_path / "info.json"
    code, output = invoke("info", pool, "--json", out)
    assert code == 0 and "not calibrated" in output
    figures = json.loads(out.read_text())
    assert figures["parameters"] is None and figures["information"] is None
    assert figures["reference"] is None
    code, output = invoke("info", write_broken_pool(tmp_path / "broken"))
    assert code == 2 and "problems; the first: items.jsonl:3" in output
    code, output = invoke("info", pool, "--json", tmp_path / "no" / "info.json")
    assert code == 2 and "does not exist" in output


def test_import_questions(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "mmlu"
    args: list[str | Path] = ["import", "questions", source, "--out", pool, "--language", "en"]
    maps = ["--map", "id=question_id", "--map", "scenario=category"]
    code, output = invoke(*args, *maps)
    assert code == 0, output
    assert f"imported 3 questions from {source} into {pool}" in output
    assert json.loads((pool / "pool.json").read_text())["name"] == "mmlu"
    assert invoke("validate", pool)[0] == 0
    code, output = invoke(*args, *maps)
    assert code == 2 and "already holds items.jsonl" in output
    code, output = invoke(*args[:-4], "--out", tmp_path / "x", "--language", "en", "--map", "id")
    assert code == 2 and "--map takes field=column, got 'id'" in output
    code, output = invoke(*args[:-4], "--out", tmp_path / "y", "--language", "en")
    assert code == 2 and "no column 'id'" in output


def test_import_lm_eval(tmp_path: Path) -> None:
    files = [
        write_samples(
            tmp_path / "res" / "model-a", "arc_easy", [sample(0, acc=1), sample(1, acc=0)]
        ),
        write_samples(
            tmp_path / "res" / "model-b", "arc_easy", [sample(0, acc=0), sample(1, acc=0)]
        ),
    ]
    out = tmp_path / "responses.jsonl"
    code, output = invoke("import", "lm-eval", *files, "--out", out)
    assert code == 0, output
    assert "2 subjects x 2 items (acc)" in output and "model-a" in output
    matrix = read_responses(out)
    assert matrix.subject_ids == ("model-a", "model-b")
    assert matrix.accuracy().tolist() == [0.5, 0.0]
    code, output = invoke("import", "lm-eval", files[0], "--out", out, "--metric", "em")
    assert code == 2 and "no 'em' in the sample; keys present: acc" in output
    assert len(output.strip().splitlines()) == 1
