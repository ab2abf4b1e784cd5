"""The leaderboard's CSV, JSON and self-contained HTML page."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import cat
from cat.leaderboards.files import CSV_COLUMNS
from tests.cat.leaderboards.runs import assessed, with_usage, write
from tests.cat.reports.page_check import inline_images


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> cat.Leaderboard:
    """Two runs of one model with different settings, one live model with tokens and an
    unsafe name, and the demo pool's references."""
    folder = tmp_path_factory.mktemp("runs")
    write(folder, "short.json", assessed(0.4))
    write(folder, "long.json", assessed(0.4, length=40, seed=3))
    write(folder, "live.json", with_usage(assessed(1.5), "<b>evil</b>&co", 9_000, 1_000))
    return cat.leaderboard(folder, references=True)


def test_json_is_the_dump_and_reads_back(board: cat.Leaderboard, tmp_path: Path) -> None:
    path = cat.write_leaderboard(board, tmp_path / "board.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == board.model_dump(mode="json")
    assert cat.Leaderboard.model_validate(data) == board
    assert data["package_version"] and data["created"]
    assert {r["seed"] for r in data["rows"] if r["kind"] == "model"} == {0, 3}


def test_csv_has_a_row_per_row_and_a_column_per_differing_setting(
    board: cat.Leaderboard, tmp_path: Path
) -> None:
    path = cat.write_leaderboard(board, str(tmp_path / "board.CSV"))
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [*CSV_COLUMNS, "settings.max_items", "settings.seed"]
    assert len(rows) == len(board.rows)
    assert [int(r["rank"]) for r in rows] == [r.rank for r in board.rows]
    live = next(r for r in rows if r["model"] == "<b>evil</b>&co")
    assert (live["prompt_tokens"], live["calls_from_store"], live["cost"]) == ("9000", "2", "")
    assert float(live["accuracy"]) == assessed(1.5).predicted_accuracy.value
    ref = next(r for r in rows if r["kind"] == "reference")
    assert ref["low"] == ref["settings.seed"] == ref["seed"] == ""  # blank, not "None"
    long = next(r for r in rows if r["source"].endswith("long.json"))
    assert (long["settings.max_items"], long["settings.seed"]) == ("40", "3")


def test_other_suffixes_and_arguments_are_refused(board: cat.Leaderboard, tmp_path: Path) -> None:
    with pytest.raises(cat.CatError, match=r"board\.txt: the table is written as \.csv or \.json"):
        cat.write_leaderboard(board, tmp_path / "board.txt")
    with pytest.raises(cat.CatError, match="board must be a Leaderboard"):
        cat.write_leaderboard({}, tmp_path / "b.csv")  # type: ignore[arg-type]
    with pytest.raises(cat.CatError, match="board must be a Leaderboard"):
        cat.write_leaderboard_html(None, tmp_path / "b.html")  # type: ignore[arg-type]


def test_the_page_stands_alone_and_escapes_names(board: cat.Leaderboard, tmp_path: Path) -> None:
    path = cat.write_leaderboard_html(board, tmp_path / "board.html")
    page = path.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["board.html"]
    (plot,) = inline_images(page)
    assert len(plot) > 10_000
    assert "&lt;b&gt;evil&lt;/b&gt;&amp;co" in page and "<b>evil" not in page
    table = page.split("<tbody>")[1].split("</tbody>")[0]
    assert table.count("<tr") == len(board.rows)
    assert table.count("<tr class='ref'>") == len(board.rows) - 3
    assert "sim:0.4 (long)" in table and "sim:0.4 (short)" in table
    assert "<th>max_items</th><th>seed</th>" in page  # the settings that differ
    assert "9,000" not in page and "10,000" in page  # tokens: prompt + completion
    assert "Settings that differ between the runs: max_items, seed." in page
    assert "<h2>Notes</h2>" in page and "sim:0.4 has 2 runs" in page


def test_a_long_shared_list_setting_is_folded_under_its_count(
    board: cat.Leaderboard, tmp_path: Path
) -> None:
    examples = [f"q{k:04d}" for k in range(400)]
    shared = board.model_copy(
        update={"common_settings": {**board.common_settings, "excluded_items": examples}}
    )
    page = cat.write_leaderboard_html(shared, tmp_path / "board.html").read_text("utf-8")
    row = page.split("<th>excluded_items</th>")[1].split("</tr>")[0]
    assert "<details><summary>400 values: <code>&quot;q0000&quot;, &quot;q0001&quot;" in row
    assert row.count("q0399") == 1  # the whole list, once, folded
    assert (
        '<table class="settings">' in page and "table.settings td { white-space: normal; }" in page
    )
