"""The pool folder: manifest, every problem with its file and line, loading."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from itempool import PoolFormatError, PoolManifest, Problem, check_pool, load_pool

ITEM_IDS = ("q1", "q2", "q3", "q4", "q5")
# Rows deliberately not in item order: load_pool must reorder them.
PARAM_ROWS = {
    "q3": (1.5, 0.5, 0.2),
    "q1": (0.8, -1.0, 0.1),
    "q5": (2.0, 1.5, 0.25),
    "q2": (1.1, 0.0, 0.0),
    "q4": (0.6, -0.5, 0.15),
}


def item(item_id: str, scenario: str = "dosing", **fields: object) -> dict[str, object]:
    """An items.jsonl record; ``fields`` override the defaults."""
    record: dict[str, object] = {
        "id": item_id,
        "scenario": scenario,
        "type": "single",
        "question": f"What is the answer to {item_id}?",
        "options": {"A": "one", "B": "two", "C": "three", "D": "four"},
        "answer": "B",
    }
    record.update(fields)
    return record


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_clean_pool(folder: Path, *, calibrated: bool = True) -> Path:
    """A sound five-item pool in ``folder``: two scenarios, one multi item, and (if
    ``calibrated``) params.csv and three reference subjects."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": "tiny",
        "version": 2,
        "language": "en",
        "description": "five questions for tests",
        "scenarios": ["dosing", {"id": "units", "title": "Unit conversion"}],
        "generator": {"script": "tests"},
        "seed": 7,
    }
    (folder / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    records = [
        item("q1"),
        item("q2", "units"),
        item("q3", "units", type="multi", answer="AC"),
        item("q4"),
        item("q5", "units"),
    ]
    write_lines(folder / "items.jsonl", [json.dumps(r) for r in records])
    if calibrated:
        rows = [f"{i},{a},{b},{c},1.0,0.1,0.2," for i, (a, b, c) in PARAM_ROWS.items()]
        write_lines(folder / "params.csv", ["item_id,a,b,c,d,se_a,se_b,se_c", *rows])
        refs = [
            {"subject_id": "m-low", "theta": -1.2, "se": 0.4, "accuracy": 0.3, "n_answered": 5},
            {"subject_id": "m-high", "theta": 1.7, "se": 0.5, "accuracy": 0.9, "n_answered": 5},
            {"subject_id": "m-mid", "theta": 0.1, "se": 0.3, "accuracy": None, "n_answered": 0},
        ]
        write_lines(folder / "reference.jsonl", [json.dumps(r) for r in refs])
    return folder


def write_broken_pool(folder: Path) -> Path:
    """A pool with one of each problem; ``BROKEN`` lists where each must be reported."""
    write_clean_pool(folder)
    records = [
        json.dumps(item("q1")),
        json.dumps(item("q2", "units")),
        json.dumps(item("q1")),  # line 3: duplicate id
        json.dumps(item("q4", answer="E")),  # line 4: answer not an option
        json.dumps(item("q5", "surgery")),  # line 5: scenario not in the manifest
        "",
        json.dumps(item("q6")),  # line 7: no params row
    ]
    write_lines(folder / "items.jsonl", records)
    write_lines(
        folder / "params.csv",
        [
            "item_id,a,b,c,d,se_a,se_b,se_c",
            "q1,1.0,0.0,0.1,1.0,,,",
            "q2,-1,0.0,0.1,1.0,,,",  # line 3: a = -1
            "q4,1.0,0.0,-0.2,1.0,,,",  # line 4: c = -0.2
            "q5,1.0,0.0,0.1,1.0,,,",
            "qX,1.0,0.0,0.1,1.0,,,",  # line 6: unknown item
        ],
    )
    write_lines(
        folder / "reference.jsonl",
        [
            json.dumps({"subject_id": "m1", "theta": 0.2, "se": 0.3, "n_answered": 6}),
            '{"subject_id": "m2", "theta": ',  # line 2: not JSON
            json.dumps({"subject_id": "m3", "theta": 0.1, "se": 0.0, "n_answered": 6}),
        ],
    )
    return folder


#: (file, line, words in the message) for each problem of ``write_broken_pool``.
BROKEN = [
    ("items.jsonl", 3, "duplicate item id 'q1' (first on line 1)"),
    ("items.jsonl", 4, "names options not offered"),
    ("items.jsonl", 5, "scenario 'surgery' is not listed"),
    ("params.csv", 3, "a = -1.0 must be a positive number"),
    ("params.csv", 4, "c = -0.2 is outside [0, 1)"),
    ("params.csv", 6, "item 'qX' is not in items.jsonl"),
    ("params.csv", None, "no row for item 'q6' (items.jsonl:7)"),
    ("reference.jsonl", 2, "not valid JSON"),
    ("reference.jsonl", 3, "se = 0.0 must be a positive number"),
]


def test_clean_pool_has_no_problems(tmp_path: Path) -> None:
    assert check_pool(write_clean_pool(tmp_path / "pool")) == []
    assert check_pool(write_clean_pool(tmp_path / "bare", calibrated=False)) == []


def test_broken_pool_lists_every_problem_where_it_is(tmp_path: Path) -> None:
    problems = check_pool(write_broken_pool(tmp_path / "pool"))
    assert len(problems) == len(BROKEN), "\n".join(map(str, problems))
    for problem, (file, line, words) in zip(problems, BROKEN, strict=True):
        assert (problem.file, problem.line) == (file, line), str(problem)
        assert words in problem.message
        assert not problem.warning


def test_problem_reads_as_file_line_message() -> None:
    assert str(Problem("items.jsonl", 12, "duplicate item id 'x'")) == (
        "items.jsonl:12: duplicate item id 'x'"
    )
    assert str(Problem("params.csv", None, "no row")) == "params.csv: no row"
    assert str(Problem("params.csv", 3, "a is large", warning=True)) == (
        "params.csv:3: warning: a is large"
    )


def test_load_pool_gives_params_in_item_order(tmp_path: Path) -> None:
    pool = load_pool(write_clean_pool(tmp_path / "pool"))
    assert [i.id for i in pool.items] == list(ITEM_IDS)
    assert pool.params is not None
    assert pool.params.item_ids == ITEM_IDS
    np.testing.assert_allclose(pool.params.a, [PARAM_ROWS[i][0] for i in ITEM_IDS])
    np.testing.assert_allclose(pool.params.c, [PARAM_ROWS[i][2] for i in ITEM_IDS])
    assert pool.params.se_a is not None and pool.params.se_c is None
    assert pool.manifest.scenarios == ("dosing", "units")
    assert pool.manifest.version == "2" and pool.manifest.seed == 7
    assert [r.subject_id for r in pool.references] == ["m-low", "m-high", "m-mid"]
    assert pool.references[2].accuracy is None


def test_load_pool_without_calibration(tmp_path: Path) -> None:
    pool = load_pool(write_clean_pool(tmp_path / "pool", calibrated=False))
    assert pool.params is None and pool.references == [] and len(pool.items) == 5


def test_load_pool_raises_with_the_first_problem_and_a_count(tmp_path: Path) -> None:
    folder = write_broken_pool(tmp_path / "pool")
    with pytest.raises(PoolFormatError) as info:
        load_pool(folder)
    message = str(info.value)
    assert f"has {len(BROKEN)} problems; the first: items.jsonl:3: duplicate" in message
    assert f"cat pool validate {folder}" in message and "\n" not in message


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("q3,1.5,", "q3,12.5,", "unusually large"),
        ("q3,1.5,0.5,0.2,", "q3,1.5,0.5,0.6,", "c = 0.6 is unusually high"),
    ],
)
def test_legal_but_odd_values_are_only_warnings(
    tmp_path: Path, old: str, new: str, words: str
) -> None:
    folder = write_clean_pool(tmp_path / "pool")
    text = (folder / "params.csv").read_text()
    assert old in text
    (folder / "params.csv").write_text(text.replace(old, new))
    problems = check_pool(folder)
    assert [(p.line, p.warning) for p in problems] == [(2, True)]
    assert words in problems[0].message
    assert load_pool(folder).params is not None


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("q3,x,0.5,0.2,1.0,,,", "a = 'x' is not a number"),
        ("q3,1.0,0.5,0.2,1.0,,", "7 cells, expected 8"),
        ("q3,1.0,11,0.2,1.0,,,", "b = 11.0 is outside [-10, 10]"),
        ("q3,1.0,0.5,0.2,0.1,,,", "d = 0.1 is outside (c, 1]"),
        ("q3,inf,0.5,0.2,1.0,,,", "a = inf must be a positive number"),
        ("q3,,0.5,0.2,1.0,,,", "no value for a"),
    ],
)
def test_bad_params_rows(tmp_path: Path, row: str, words: str) -> None:
    folder = write_clean_pool(tmp_path / "pool")
    lines = (folder / "params.csv").read_text().splitlines()
    assert lines[1].startswith("q3,")
    write_lines(folder / "params.csv", [lines[0], row, *lines[2:]])
    problems = check_pool(folder)
    assert [(p.file, p.line) for p in problems] == [("params.csv", 2)], problems
    assert words in problems[0].message


def test_params_without_needed_columns(tmp_path: Path) -> None:
    folder = write_clean_pool(tmp_path / "pool")
    write_lines(folder / "params.csv", ["item_id,a", "q1,1.0"])
    assert [str(p) for p in check_pool(folder)] == ["params.csv:1: missing column(s) b"]


def test_reference_rows_are_checked(tmp_path: Path) -> None:
    folder = write_clean_pool(tmp_path / "pool")
    write_lines(
        folder / "reference.jsonl",
        [
            '{"subject_id": "a", "theta": NaN, "se": 0.3, "n_answered": 5}',
            '{"subject_id": "b", "theta": 0.1, "se": 0.3, "n_answered": 5, "x": 1}',
            '{"subject_id": "c", "theta": 0.1, "se": 0.3, "accuracy": 1.5, "n_answered": 5}',
            '{"subject_id": "c", "theta": 0.1, "se": 0.3, "n_answered": 5}',
            '{"subject_id": "c", "theta": 0.1, "se": 0.3, "n_answered": 5}',
        ],
    )
    problems = [str(p) for p in check_pool(folder)]
    assert problems[0] == "reference.jsonl:1: theta = nan is not finite"
    assert problems[1].startswith("reference.jsonl:2: x: Extra inputs")
    assert problems[2].startswith("reference.jsonl:3: accuracy:")
    assert problems[3] == "reference.jsonl:5: duplicate subject 'c' (first on line 4)"
    assert len(problems) == 4


def test_manifest_problems(tmp_path: Path) -> None:
    folder = write_clean_pool(tmp_path / "pool", calibrated=False)
    (folder / "pool.json").write_text('{"name": "x",\n "language": }')
    assert [(p.file, p.line) for p in check_pool(folder)] == [("pool.json", 2)]
    (folder / "pool.json").write_text(json.dumps({"name": "x", "language": "French"}))
    (problem,) = check_pool(folder)
    assert problem.file == "pool.json" and "language" in problem.message
    (folder / "pool.json").unlink()
    assert [str(p) for p in check_pool(folder)] == [
        "pool.json: missing: every pool needs a manifest"
    ]
    assert [p.file for p in check_pool(tmp_path / "nowhere")] == [str(tmp_path / "nowhere")]


def test_missing_or_empty_items(tmp_path: Path) -> None:
    folder = write_clean_pool(tmp_path / "pool", calibrated=False)
    (folder / "items.jsonl").write_text("\n")
    assert [str(p) for p in check_pool(folder)] == ["items.jsonl: no items"]
    (folder / "items.jsonl").unlink()
    assert [p.file for p in check_pool(folder)] == ["items.jsonl"]
    (folder / "items.jsonl").write_text("{nope\n[1, 2]\n")
    assert [(p.line, p.message[:12]) for p in check_pool(folder)] == [
        (1, "not valid JS"),
        (2, "Input should"),
    ]


def test_manifest_model_accepts_scenario_objects_and_extra_keys() -> None:
    manifest = PoolManifest.model_validate(
        {
            "name": "p",
            "language": "ZH",
            "scenarios": [{"id": "s1", "label": "诊断"}, "s2"],
            "homepage": "https://example.org",
        }
    )
    assert manifest.language == "zh" and manifest.scenarios == ("s1", "s2")
    assert manifest.model_extra == {"homepage": "https://example.org"}
    with pytest.raises(ValueError, match="scenario ids repeat"):
        PoolManifest.model_validate({"name": "p", "language": "en", "scenarios": ["a", "a"]})
    with pytest.raises(ValueError, match="needs an 'id'"):
        PoolManifest.model_validate({"name": "p", "language": "en", "scenarios": [{"x": 1}]})
