"""``cat.leaderboard``: ranking, P(above the next row), settings that differ, references,
cost, and the errors for input it cannot rank."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import norm

import cat
from cat.leaderboards.build import _differing, _flat
from cat.leaderboards.result import Leaderboard, LeaderboardRow
from tests.cat.leaderboards.runs import DEMO, DEMO_EN, THETAS, assessed, with_usage, write


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three RESULT.json files (sim:-1, sim:0.4, sim:1.5), listed worst first."""
    folder = tmp_path_factory.mktemp("runs")
    for k, theta in enumerate(THETAS):
        write(folder, f"run{k}.json", assessed(theta))
    return folder


def test_rows_are_best_first_with_p_above_the_next(runs: Path) -> None:
    board = cat.leaderboard(runs)
    assert [r.model for r in board.rows] == ["sim:1.5", "sim:0.4", "sim:-1"]
    assert [r.rank for r in board.rows] == [1, 2, 3]
    pairs = list(zip(board.rows, board.rows[1:], strict=False))
    assert all(a.accuracy >= b.accuracy for a, b in pairs)
    z90 = norm.ppf(0.95)
    for row, below in pairs:
        assert row.low is not None and row.high is not None
        assert below.low is not None and below.high is not None
        sds = ((row.high - row.low) / (2 * z90), (below.high - below.low) / (2 * z90))
        expected = norm.cdf((row.accuracy - below.accuracy) / math.hypot(*sds))
        assert row.p_above_next == pytest.approx(expected)
        assert row.p_above_next is not None and row.p_above_next > 0.5
    assert board.rows[-1].p_above_next is None
    best = board.rows[0]
    result = assessed(1.5)
    assert (best.accuracy, best.low, best.high) == (
        result.predicted_accuracy.value,
        result.predicted_accuracy.low,
        result.predicted_accuracy.high,
    )
    assert best.true_accuracy == pytest.approx(result.truth.accuracy if result.truth else -1)
    assert (best.n_items, best.stop_reason, best.seed) == (20, "max_length", 0)
    assert best.calls is None and best.cost is None  # a simulated model makes no calls
    assert best.source == str(runs / "run2.json") and best.label == "sim:1.5"
    assert board.pool.name == "demo" and board.measure == "accuracy"
    assert board.differing_settings == [] and board.notes == []
    assert board.common_settings["max_items"] == 20
    assert sorted(board.sources) == sorted(str(p) for p in runs.glob("*.json"))


def test_p_above_the_next_follows_the_sorted_accuracy_beside_references(runs: Path) -> None:
    # A reference's accuracy and θ can order two rows differently; the table's order is
    # the accuracy's, and so is P(>next): never below one half down the sorted rows.
    board = cat.leaderboard(runs, references=True)
    pairs = list(zip(board.rows, board.rows[1:], strict=False))
    assert any(a.theta < b.theta for a, b in pairs)  # the case this is about
    for row, _ in pairs:
        assert row.p_above_next is not None and row.p_above_next >= 0.5
    for row, below in pairs:
        if row.kind == below.kind == "reference":  # both observed on the whole pool
            assert row.p_above_next == (0.5 if row.accuracy == below.accuracy else 1.0)


def test_files_folders_and_results_in_memory_mix_and_count_once(runs: Path) -> None:
    board = cat.leaderboard([runs / "run0.json", runs, str(runs / "run1.json")])
    assert len(board.rows) == 3  # each file once, whether named or in the folder
    mixed = cat.leaderboard([assessed(0.4, 30), runs / "run0.json"])
    assert [r.source for r in mixed.rows] == [None, str(runs / "run0.json")]


def test_p_above_is_a_normal_approximation_with_its_edges() -> None:
    from cat.leaderboards.build import p_above

    assert p_above(1.0, 0.3, 1.0, 0.4) == 0.5
    assert p_above(1.0, 0.3, 0.0, 0.4) == pytest.approx(norm.cdf(2.0))
    assert p_above(0.0, 0.0, 0.0, 0.0) == 0.5 and p_above(1.0, 0.0, 0.0, 0.0) == 1.0
    assert p_above(1.0, math.inf, 0.0, 0.1) is None


def test_settings_that_differ_are_found_whatever_their_keys(tmp_path: Path) -> None:
    write(tmp_path, "short.json", assessed(0.4))
    write(tmp_path, "long.json", assessed(0.4, length=40, seed=3))
    board = cat.leaderboard(tmp_path)
    assert board.differing_settings == ["max_items", "seed"]
    assert "max_items" not in board.common_settings and "policy" in board.common_settings
    # a model run twice: both rows kept, told apart by file, and said so
    assert sorted(r.label for r in board.rows) == ["sim:0.4 (long)", "sim:0.4 (short)"]
    assert board.notes == [
        "sim:0.4 has 2 runs, all kept as separate rows (labelled by file), with different settings"
    ]
    # keys no run of today has (a generation setting, say) need no code
    settings: list[dict[str, Any]] = [
        {"temperature": 0.0, "seed": 1, "stop": ["\n"], "extra": None},
        {"temperature": 0.7, "seed": 1, "stop": ["\n"]},
        {"seed": 1, "stop": ["\n\n"]},
    ]
    assert _differing(settings) == ["temperature", "stop"]  # absent: as null, unset
    # a group of settings is compared key by key, and a group that does not apply (a
    # simulated model's) is as its keys unset
    nested = [
        {"generation": {"temperature": 0.0, "max_tokens": None}},
        {"generation": {"temperature": 0.7, "max_tokens": None}},
        {"generation": None},
    ]
    assert _differing([_flat(n) for n in nested]) == ["generation.temperature"]


def test_the_same_run_twice_is_kept_and_called_a_repeat(tmp_path: Path) -> None:
    write(tmp_path / "a", "r.json", assessed(0.4))
    write(tmp_path / "b", "r.json", assessed(0.4))
    board = cat.leaderboard([tmp_path / "a", tmp_path / "b"])
    labels = {r.label for r in board.rows}
    assert labels == {
        f"sim:0.4 ({tmp_path / 'a' / 'r.json'})",
        f"sim:0.4 ({tmp_path / 'b' / 'r.json'})",
    }
    assert board.notes[0].endswith("with the same settings: repeated runs")
    assert board.differing_settings == []


def test_references_join_the_ranking_at_their_observed_accuracy(runs: Path) -> None:
    board = cat.leaderboard(runs, references=True)
    refs = [r for r in board.rows if r.kind == "reference"]
    pool = cat.load_pool(DEMO)
    assert len(refs) == len(pool.references) and len(board.models) == 3
    first = next(r for r in pool.references if r.subject_id == refs[0].model)
    assert refs[0].accuracy == first.accuracy and refs[0].n_items == first.n_answered
    assert refs[0].low is None and refs[0].settings is None
    accuracies = [r.accuracy for r in board.rows]
    assert accuracies == sorted(accuracies, reverse=True)
    assert [r.rank for r in board.rows] == list(range(1, len(board.rows) + 1))
    # --pool gives the same rows, and implies the references
    assert cat.leaderboard(runs, pool=DEMO).model_dump(exclude={"created"}) == board.model_dump(
        exclude={"created"}
    )


def test_references_from_a_moved_pool_or_another_pool(runs: Path, tmp_path: Path) -> None:
    data = assessed(0.4).model_dump(mode="json")
    data["pool"]["path"] = str(tmp_path / "gone")
    moved = write(tmp_path, "moved.json", data)
    # Not at its folder: found by its name, as the same pool and version.
    found = cat.leaderboard(moved, references=True)
    assert len(found.rows) == 1 + len(cat.load_pool(DEMO).references)
    data["pool"]["version"] = "0.0-elsewhere"
    other = write(tmp_path, "other.json", data)
    with pytest.raises(
        cat.CatError, match=r"is not at .*gone .*no pool demo .* is found by name.*pool DIR"
    ):
        cat.leaderboard(other, references=True)
    copy = tmp_path / "copy"
    shutil.copytree(DEMO, copy)
    assert len(cat.leaderboard(moved, pool=copy).rows) == 1 + len(cat.load_pool(DEMO).references)
    with pytest.raises(cat.CatError, match="is demo-en v1, but the results are on demo v1"):
        cat.leaderboard(runs, pool=DEMO_EN)


def test_runs_on_different_pools_are_refused(runs: Path, tmp_path: Path) -> None:
    other = write(tmp_path, "en.json", assessed(0.4, pool=DEMO_EN))
    with pytest.raises(cat.CatError) as caught:
        cat.leaderboard([runs / "run0.json", other])
    message = str(caught.value)
    assert "different pools" in message and "\n" not in message
    assert f"{runs / 'run0.json'} is on demo v1, {other} on demo-en v1" in message


def test_cost_from_prices_where_known(tmp_path: Path) -> None:
    write(tmp_path, "a.json", with_usage(assessed(0.4), "gpt-x", 1_000_000, 200_000))
    write(tmp_path, "b.json", with_usage(assessed(1.5), "unpriced", 5_000, 100))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-x": {"input": 2.5, "output": 10.0}}), encoding="utf-8")
    board = cat.leaderboard([tmp_path / "a.json", tmp_path / "b.json"], prices=prices)
    by_model = {r.model: r for r in board.rows}
    assert by_model["gpt-x"].cost == pytest.approx(2.5 + 2.0)
    assert by_model["unpriced"].cost is None  # unknown, not free
    assert by_model["gpt-x"].calls == 20 and by_model["gpt-x"].calls_from_store == 2
    assert by_model["gpt-x"].prompt_tokens == 1_000_000 and board.prices == str(prices)
    assert cat.leaderboard(tmp_path / "a.json").rows[0].cost is None  # no prices given


def _error(inputs: Any, **kwargs: Any) -> str:
    with pytest.raises(cat.CatError) as caught:
        cat.leaderboard(inputs, **kwargs)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_input_that_is_no_result_is_named_with_its_first_problem(tmp_path: Path) -> None:
    assert "no results given" in _error([])
    assert _error(tmp_path / "nothing.json").endswith("nothing.json: no such file or folder")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert f"{broken}: not a RESULT.json of cat assess (not JSON" in _error(broken)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    assert f"{listed}: not a RESULT.json of cat assess (a JSON list" in _error(listed)
    data = assessed(0.4).model_dump(mode="json")
    del data["theta"]
    data["settings"]["max_items"] = "many"
    bad = write(tmp_path, "bad.json", data)
    message = _error(bad)
    assert message.startswith(f"{bad}: not a RESULT.json of cat assess (")
    assert "and 1 more" in message  # the first problem, and how many others
    # Another of cat's outputs is named as what it is.
    compared = tmp_path / "compare.json"
    compared.write_text(
        json.dumps({"model_a": "x", "model_b": "y", "decision": "A", "difference": 0.1}),
        encoding="utf-8",
    )
    assert _error(compared) == f"{compared}: a cat compare result, not a RESULT.json of cat assess"
    with pytest.raises(cat.CatError, match=r"a cat compare result, not a RESULT\.json"):
        cat.compare_results(compared, compared.with_name("other.json"))
    assert "must be RESULT.json paths" in _error(42)
    assert "must be RESULT.json paths" in _error([None])
    assert "references must be True or False" in _error(bad, references="yes")


def test_a_folder_skips_other_json_and_needs_one_result(runs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    shutil.copytree(runs, folder)
    cat.leaderboard(runs).write_json(folder / "board.json")  # a leaderboard beside the runs
    write(folder, "notes.json", {"hello": 1})
    board = cat.leaderboard(folder)
    assert len(board.rows) == 3
    assert board.notes == [f"{folder}: skipped board.json, notes.json (not RESULT.json files)"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _error(empty) == f"{empty}: holds no RESULT.json of cat assess (no *.json with results)"


def test_every_key_of_the_file_is_documented() -> None:
    """The JSON's keys are listed in ``cat.leaderboards.result``'s docstring."""
    from cat.leaderboards import result

    doc = result.__doc__ or ""
    for key in (*Leaderboard.model_fields, *LeaderboardRow.model_fields):
        assert f"``{key}``" in doc, key


def test_what_assess_flagged_is_carried_to_the_row(tmp_path: Path) -> None:
    from cat.leaderboards.display import columns

    data = assessed(0.4).model_dump(mode="json")
    data["person_fit"]["flagged"] = True
    data["difficulty_check"] = {
        "gain": 0.01,
        "lowest_reference": 0.05,
        "references": 40,
        "length": 100,
        "flagged": True,
        "reason": "flatter than every reference",
    }
    flagged = write(tmp_path, "flagged.json", data)
    clean = write(tmp_path, "clean.json", assessed(1.5))
    board = cat.leaderboard([flagged, clean])
    assert {r.label: r.flags for r in board.rows} == {
        "sim:0.4": ["person fit", "difficulty"],
        "sim:1.5": [],
    }
    shown = {c.header: c.cells for c in columns(board)}
    assert shown["flags"] == ["", "person fit, difficulty"]
    assert "flags" not in {c.header for c in columns(cat.leaderboard(clean))}
