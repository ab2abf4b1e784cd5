"""``cat pool`` through the command line: validate, info, import questions / lm-eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cat.cli.app import app as cat_app
from cat.cli.pool import pool_app
from itempool.formats.responses import read_responses
from tests.cat.pools.test_importer import MMLU_HEADER, mmlu_rows, sample, write_csv, write_samples
from tests.itempool.test_format import (
    BROKEN,
    PARAM_ROWS,
    item,
    write_broken_pool,
    write_clean_pool,
    write_lines,
)

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
    assert set(figures) == {
        "pool",
        "items",
        "parameters",
        "information",
        "reference",
        "multidimensional",
        "protocol",
    }
    assert figures["multidimensional"] is None
    assert figures["protocol"] is None  # the pool records none: the built-in one
    assert figures["items"]["by_scenario"]["units"] == {
        "single": 2,
        "multi": 1,
        "order": 0,
        "open": 0,
        "total": 3,
    }
    assert figures["items"]["by_type"] == {"single": 4, "multi": 1, "order": 0, "open": 0}
    assert set(figures["parameters"]) == {"a", "b", "c"}
    assert abs(figures["parameters"]["a"]["max"] - 2.0) < 1e-12
    info = figures["information"]
    assert info["theta"] == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]
    assert len(info["values"]) == 7 and all(v > 0 for v in info["values"])
    assert info["max_value"] >= max(info["values"]) and -6 <= info["max_theta"] <= 6
    ref = figures["reference"]
    assert (ref["count"], ref["theta_min"], ref["theta_max"]) == (3, -1.2, 1.7)
    assert [r["subject_id"] for r in ref["top"]] == ["m-high", "m-mid", "m-low"]


def test_info_reference_title_stays_one_line_at_80_columns(tmp_path: Path) -> None:
    """The reference table's title is no wider than the table (rich wraps it to the
    table's width, not the terminal's); the θ range is its caption."""
    pool = write_clean_pool(tmp_path / "pool")
    result = runner.invoke(app, ["pool", "info", str(pool)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    assert "Reference subjects: 3, the top 3" in lines
    assert "θ from -1.20 to +1.70" in lines


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
    # Without --map, the same columns are found by their names.
    code, output = invoke(*args[:-4], "--out", tmp_path / "y", "--language", "en")
    assert code == 0 and "columns found: id=question_id" in output, output
    assert "scenario=category" in output
    assert (tmp_path / "y" / "items.jsonl").read_text() == (pool / "items.jsonl").read_text()


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


def write_3pl_pool(folder: Path) -> Path:
    """The clean pool with ``"model": "3pl"`` in its manifest."""
    write_clean_pool(folder)
    manifest = json.loads((folder / "pool.json").read_text())
    (folder / "pool.json").write_text(json.dumps({**manifest, "model": "3pl"}))
    return folder


def test_info_shows_c_as_read(tmp_path: Path) -> None:
    pool = write_3pl_pool(tmp_path / "pool")
    code, output = invoke("info", pool)
    assert code == 0, output
    # c of q1..q5 in params.csv: 0.1, 0.0, 0.2, 0.15, 0.25
    rows = [line.split("│")[1:-1] for line in output.splitlines() if line.startswith("│ c ")]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["c", "0.140", "0.086", "0.000", "0.250"]
    ]


def params_without_c(*, column: bool) -> list[str]:
    """The clean pool's params.csv with no c column (``column=False``) or, on line 3
    (item q1), an empty c cell."""
    if not column:
        rows = [f"{i},{a},{b},1.0,0.1,0.2," for i, (a, b, _) in PARAM_ROWS.items()]
        return ["item_id,a,b,d,se_a,se_b,se_c", *rows]
    blank = {**{i: str(c) for i, (_, _, c) in PARAM_ROWS.items()}, "q1": ""}
    rows = [f"{i},{a},{b},{blank[i]},1.0,0.1,0.2," for i, (a, b, _) in PARAM_ROWS.items()]
    assert rows[1].startswith("q1,")
    return ["item_id,a,b,c,d,se_a,se_b,se_c", *rows]


@pytest.mark.parametrize(
    ("column", "where", "words"),
    [
        (False, "params.csv:1", "missing column(s) c (a 3pl pool needs them)"),
        (True, "params.csv:3", "no value for c"),
    ],
    ids=["no-c-column", "empty-c-cell"],
)
def test_a_3pl_pool_without_its_c_values_is_refused(
    tmp_path: Path, column: bool, where: str, words: str
) -> None:
    # Read as c = 0, such a pool would give numbers that look right and are wrong.
    pool = write_3pl_pool(tmp_path / "pool")
    write_lines(pool / "params.csv", params_without_c(column=column))
    code, output = invoke("validate", pool)
    assert code == 2
    assert output.splitlines() == [f"{where}: {words}", f"pool {pool}: 1 problem"]
    code, output = invoke("info", pool)
    assert code == 2 and f"has 1 problem; the first: {where}: {words}" in output
    result = runner.invoke(cat_app, ["assess", "--pool", str(pool), "--model", "sim:0.5"])
    assert result.exit_code == 2 and f"{where}: {words}" in result.output


def test_counts_are_singular_for_one(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool", calibrated=False)
    write_lines(pool / "items.jsonl", [json.dumps(item("q1"))])
    code, output = invoke("validate", pool)
    assert code == 0 and output.strip() == f"pool {pool}: 1 item, no problems"
    code, output = invoke("info", pool)
    assert code == 0 and "tiny v2 (en): 1 item, not calibrated" in output


def test_imports_create_missing_parent_folders(tmp_path: Path) -> None:
    # The README's MMLU-Pro chain starts with `--out pools/mmlu-pro` and no pools/ folder.
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "pools" / "mmlu-pro"
    code, output = invoke(
        "import", "questions", source, "--out", pool, "--language", "en",
        "--map", "id=question_id", "--map", "scenario=category",
    )  # fmt: skip
    assert code == 0, output
    assert invoke("validate", pool) == (0, f"pool {pool}: 3 items, no problems\n")
    files = [write_samples(tmp_path / "res" / "model-a", "arc_easy", [sample(0, acc=1)])]
    out = tmp_path / "runs" / "arc" / "responses.csv"
    code, output = invoke("import", "lm-eval", *files, "--out", out)
    assert code == 0, output
    assert "1 subject x 1 item (acc)" in output
    assert read_responses(out).subject_ids == ("model-a",)
