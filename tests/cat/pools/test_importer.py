"""Importing a benchmark's questions as a pool, and lm-eval sample logs as responses."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cat.errors import CatError
from cat.pools.importer import import_lm_eval, import_questions, lm_eval_task
from irt.responses import MISSING
from itempool import check_pool, load_pool
from itempool.formats.responses import read_responses

MMLU_MAP = {
    "id": "question_id",
    "question": "question",
    "answer": "answer",
    "options": "options",
    "scenario": "category",
    "meta": "src",
}
MMLU_HEADER = ["question_id", "category", "src", "answer", "n_options", "question", "options"]


def mmlu_rows() -> list[list[str]]:
    """Rows in the layout of MMLU-Pro's items.csv.gz, questions written for the tests."""
    return [
        ["10", "math", "ori_a", "B", "3", "What is 2 + 2?", json.dumps(["3", "4", "5"])],
        ["11", "law", "ori_b", "A", "2", "Is a verbal contract binding?", '["Often", "Never"]'],
        ["12", "math", "ori_a", "C", "4", "Which is prime?\nPick one.", '["4", "6", "7", "9"]'],
    ]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8", newline="") as fh:
            fh.write(buffer.getvalue())
    else:
        path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    return path


def read_items(pool: Path) -> list[dict[str, Any]]:
    lines = (pool / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_csv_with_json_list_options(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "items.csv.gz", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "pool"
    assert import_questions(source, MMLU_MAP, pool, "mmlu-mini", "en").count == 3
    items = read_items(pool)
    assert [i["id"] for i in items] == ["10", "11", "12"]
    assert items[0]["options"] == {"A": "3", "B": "4", "C": "5"}
    assert items[0]["answer"] == "B" and items[0]["type"] == "single"
    assert items[2]["question"] == "Which is prime?\nPick one."
    assert items[1]["meta"] == {"src": "ori_b"}
    manifest = json.loads((pool / "pool.json").read_text())
    assert manifest["scenarios"] == ["math", "law"]
    assert manifest["version"] == "1" and manifest["source"] == "items.csv.gz"
    assert manifest["name"] == "mmlu-mini" and manifest["language"] == "en"
    assert check_pool(pool) == []


def test_csv_with_option_columns_and_answer_index(tmp_path: Path) -> None:
    header = ["qid", "stem", "opa", "opb", "opc", "opd", "cop", "subject"]
    rows = [
        ["m1", "Which vitamin is fat-soluble?", "C", "B1", "K", "B12", "2", "biochem"],
        ["m2", "Normal adult heart rate?", "20", "70", "150", "", "1", "physio"],
    ]
    source = write_csv(tmp_path / "medmcqa.csv", header, rows)
    mapping = {
        "id": "qid",
        "question": "stem",
        "options": "opa,opb,opc,opd",
        "answer_index": "cop",
        "scenario": "subject",
    }
    assert import_questions(source, mapping, tmp_path / "pool", "med", "en").count == 2
    first, second = read_items(tmp_path / "pool")
    assert first["options"] == {"A": "C", "B": "B1", "C": "K", "D": "B12"}
    assert first["answer"] == "C"
    assert second["options"] == {"A": "20", "B": "70", "C": "150"}  # blank D dropped
    assert second["answer"] == "B"


def test_jsonl_with_object_options_and_multi_answers(tmp_path: Path) -> None:
    records = [
        {"qid": 1, "q": "以下哪些是抗生素？", "opts": {"A": "青霉素", "B": "阿司匹林", "C": "头孢"},
         "key": "A, C", "area": "药学"},
        {"qid": 2, "q": "Order the steps", "opts": ["wash", "dry", "fold"], "key": "ABC",
         "area": "nursing", "kind": "order"},
        {"qid": 3, "q": "Pick one", "opts": ["x", "y"], "key": "b", "area": "nursing",
         "kind": None},
    ]  # fmt: skip
    source = tmp_path / "q.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n\n")
    mapping = {
        "id": "qid", "question": "q", "options": "opts", "answer": "key", "scenario": "area",
        "type": "kind",
    }  # fmt: skip
    assert import_questions(source, mapping, tmp_path / "pool", "zh-mini", "zh").count == 3
    items = read_items(tmp_path / "pool")
    assert (items[0]["id"], items[0]["type"], items[0]["answer"]) == ("1", "multi", "AC")
    assert items[0]["options"]["A"] == "青霉素"
    assert (items[1]["type"], items[1]["answer"]) == ("order", "ABC")
    assert (items[2]["type"], items[2]["answer"]) == ("single", "B")
    assert "青霉素" in (tmp_path / "pool" / "items.jsonl").read_text(encoding="utf-8")
    assert load_pool(tmp_path / "pool").manifest.language == "zh"


def test_refuses_to_overwrite_a_pool(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "pool"
    import_questions(source, MMLU_MAP, pool, "p", "en")
    before = (pool / "items.jsonl").read_bytes()
    with pytest.raises(CatError, match=r"already holds items.jsonl"):
        import_questions(source, MMLU_MAP, pool, "p", "en")
    assert (pool / "items.jsonl").read_bytes() == before


def test_creates_missing_parent_folders(tmp_path: Path) -> None:
    # `--out pools/mmlu-pro` before pools/ exists: the README's MMLU-Pro chain.
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "pools" / "mmlu-pro"
    assert import_questions(source, MMLU_MAP, pool, "mmlu-pro", "en").count == 3
    assert check_pool(pool) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(CatError, match=r"cannot create the folder .*file.*pool"):
        import_questions(source, MMLU_MAP, tmp_path / "file" / "pool", "p", "en")


@pytest.mark.parametrize(
    ("row", "words"),
    [
        (["13", "math", "s", "E", "2", "Q?", '["a", "b"]'], "items.csv:6: answer 'E' names"),
        (["10", "math", "s", "A", "2", "Q?", '["a", "b"]'], "items.csv:6: duplicate item id '10'"),
        (["13", "math", "s", "A", "2", "Q?", "a|b"], "items.csv:6: options column 'options'"),
        (["13", "math", "s", "A", "2", "", '["a", "b"]'], "items.csv:6: question:"),
        (
            ["13", "math", "s", "A", "2", "Q?", '["a"]'],
            "items.csv:6: an item needs at least two options",
        ),
        (["13", "math", "s", "A"], "items.csv:6: 4 cells, expected 7"),
    ],
)
def test_a_bad_row_names_its_line(tmp_path: Path, row: list[str], words: str) -> None:
    # The third row's question spans two lines, so the fourth record starts on line 6.
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, [*mmlu_rows(), row])
    with pytest.raises(CatError, match="^" + words.replace("[", r"\[").replace("(", r"\(")):
        import_questions(source, MMLU_MAP, tmp_path / "pool", "p", "en")
    assert not (tmp_path / "pool").exists()


def test_bad_mappings_and_files(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "items.csv", MMLU_HEADER, mmlu_rows())
    pool = tmp_path / "pool"
    with pytest.raises(CatError, match="no column 'stem' \\(columns: question_id, category"):
        import_questions(source, {**MMLU_MAP, "question": "stem"}, pool, "p", "en")
    with pytest.raises(CatError, match="unknown field 'explanation'"):
        import_questions(source, {**MMLU_MAP, "explanation": "x"}, pool, "p", "en")
    with pytest.raises(CatError, match="exactly one of answer"):
        import_questions(source, {**MMLU_MAP, "answer_index": "n_options"}, pool, "p", "en")
    odd = write_csv(tmp_path / "odd.csv", ["text", "opts", "k"], [["Q?", '["a", "b"]', "A"]])
    with pytest.raises(CatError, match="no column found for question and options: map it"):
        import_questions(odd, {}, pool, "p", "en")
    with pytest.raises(CatError, match="no answer column found: map it"):
        import_questions(odd, {"question": "text", "options": "opts"}, pool, "p", "en")
    with pytest.raises(CatError, match="language must be"):
        import_questions(source, MMLU_MAP, pool, "p", "French")
    with pytest.raises(CatError, match=r"must be .csv, .jsonl, .json"):
        import_questions(source.rename(tmp_path / "items.txt"), MMLU_MAP, pool, "p", "en")
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"question_id": 1, "question": "Q?"}) + "\n")
    with pytest.raises(CatError, match=r"q.jsonl:1: no key 'answer'"):
        import_questions(jsonl, MMLU_MAP, pool, "p", "en")
    assert not pool.exists()


def test_first_rows_of_mmlu_pro(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "mmlu-pro" / "items.csv.gz"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    with gzip.open(source, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = [row for _, row in zip(range(200), reader, strict=False)]
    sample = write_csv(tmp_path / "head.csv", header, rows)  # a temporary slice, not a copy
    assert import_questions(sample, MMLU_MAP, tmp_path / "pool", "mmlu-pro", "en").count == 200
    pool = load_pool(tmp_path / "pool")
    assert len(pool.items) == 200 and pool.manifest.scenarios
    assert all(len(i.options) >= 3 and i.answer in i.options for i in pool.items)


# ---------------------------------------------------------------- lm-evaluation-harness


def sample(doc_id: int, **metrics: object) -> dict[str, object]:
    """One line of an lm-eval samples file (as --log_samples writes it)."""
    return {
        "doc_id": doc_id,
        "doc": {"question": f"question {doc_id}", "choices": ["a", "b"]},
        "target": 1,
        "arguments": [["ctx", " a"], ["ctx", " b"]],
        "resps": [[["-1.2", False]], [["-0.3", True]]],
        "filtered_resps": [["-1.2", False], ["-0.3", True]],
        "filter": "none",
        "metrics": list(metrics),
        "doc_hash": "h",
        "prompt_hash": "p",
        "target_hash": "t",
        **metrics,
    }


def write_samples(folder: Path, task: str, rows: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_{task}_2024-06-01T10-20-30.123456.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def lm_eval_output(tmp_path: Path) -> list[Path]:
    """Two models x two tasks in lm-eval's layout; model B skipped one ARC question."""
    out = tmp_path / "results"
    a, b = out / "org__model-A", out / "org__model-B"
    return [
        write_samples(a, "arc_easy", [sample(0, acc=1.0, acc_norm=1.0), sample(1, acc=0.0)]),
        write_samples(a, "mmlu_anatomy", [sample(0, acc=1), sample(1, acc=1), sample(2, acc=0)]),
        write_samples(b, "arc_easy", [sample(1, acc=1.0)]),
        write_samples(b, "mmlu_anatomy", [sample(2, acc=True), sample(0, acc=0), sample(1, acc=0)]),
    ]


def test_lm_eval_task_names() -> None:
    assert lm_eval_task(Path("samples_mmlu_anatomy_2024-06-01T10-20-30.1.jsonl")) == (
        "mmlu_anatomy"
    )
    with pytest.raises(CatError, match="not an lm-eval samples file"):
        lm_eval_task(Path("results_2024-06-01T10-20-30.jsonl"))


def test_lm_eval_two_models_two_tasks(tmp_path: Path, lm_eval_output: list[Path]) -> None:
    out = tmp_path / "responses.jsonl"
    calls: list[int] = []
    matrix = import_lm_eval(lm_eval_output, out, progress=calls.append)
    assert calls == [1, 2, 3, 4]
    assert matrix.subject_ids == ("org__model-A", "org__model-B")
    assert matrix.item_ids == (
        "arc_easy/0",
        "arc_easy/1",
        "mmlu_anatomy/0",
        "mmlu_anatomy/1",
        "mmlu_anatomy/2",
    )
    np.testing.assert_array_equal(matrix.values, [[1, 0, 1, 1, 0], [MISSING, 1, 0, 0, 1]])
    back = read_responses(out)
    assert back.subject_ids == matrix.subject_ids
    np.testing.assert_array_equal(
        back.as_float()[:, [back.item_ids.index(i) for i in matrix.item_ids]], matrix.as_float()
    )


def test_lm_eval_folder_csv_output_and_subject(tmp_path: Path, lm_eval_output: list[Path]) -> None:
    folder = lm_eval_output[0].parent  # model A's folder
    matrix = import_lm_eval([folder], tmp_path / "r.csv", subject="model-a")
    assert matrix.subject_ids == ("model-a",) and matrix.n_items == 5
    assert read_responses(tmp_path / "r.csv").n_items == 5
    with pytest.raises(CatError, match="'one' answered 'arc_easy/1' already at samples_arc"):
        import_lm_eval(lm_eval_output, tmp_path / "r.jsonl", subject="one")


def test_lm_eval_rejects_partial_scores_and_names_missing_metrics(
    tmp_path: Path, lm_eval_output: list[Path]
) -> None:
    bad = write_samples(tmp_path / "m", "arc_easy", [sample(0, acc=1.0), sample(1, acc=0.5)])
    with pytest.raises(CatError, match=r"^samples_arc_easy_.*\.jsonl:2: acc = 0.5; only 0/1"):
        import_lm_eval([bad], tmp_path / "r.jsonl")
    with pytest.raises(
        CatError, match=r":1: no 'exact_match' in the sample; keys present: acc, acc_norm$"
    ):
        import_lm_eval(lm_eval_output, tmp_path / "r.jsonl", metric="exact_match")
    with pytest.raises(CatError, match=r"mmlu_anatomy_.*:1: no 'f1' .* present: acc$"):
        import_lm_eval(lm_eval_output[1:], tmp_path / "r.jsonl", metric="f1")
    old_style = {k: v for k, v in sample(0, acc=1, acc_norm=1).items() if k != "metrics"}
    old = write_samples(tmp_path / "m", "old", [old_style])
    with pytest.raises(CatError, match=r"keys present: acc, acc_norm$"):
        import_lm_eval([old], tmp_path / "r.jsonl", metric="f1")
    assert not (tmp_path / "r.jsonl").exists()
    with pytest.raises(CatError, match=r"write the responses to a .jsonl or .csv"):
        import_lm_eval(lm_eval_output, tmp_path / "r.txt")
    with pytest.raises(CatError, match="no such file"):
        import_lm_eval([tmp_path / "absent.jsonl"], tmp_path / "r.jsonl")


def test_lm_eval_several_filters(tmp_path: Path) -> None:
    strict = {**sample(0, exact_match=1.0), "filter": "strict-match"}
    flexible = {**sample(0, exact_match=0.0), "filter": "flexible-extract"}
    path = write_samples(tmp_path / "m", "gsm8k", [strict, flexible])
    out = tmp_path / "r.jsonl"
    with pytest.raises(CatError, match="several filters"):
        import_lm_eval([path], out, metric="exact_match")
    matrix = import_lm_eval([path], out, metric="exact_match", filter_name="flexible-extract")
    assert matrix.values.tolist() == [[0]]


@pytest.mark.parametrize("name", ["r.jsonl", "r.csv"])
def test_lm_eval_creates_missing_parent_folders(
    tmp_path: Path, lm_eval_output: list[Path], name: str
) -> None:
    out = tmp_path / "runs" / "2024" / name
    matrix = import_lm_eval(lm_eval_output, out)
    back = read_responses(out)
    assert back.subject_ids == matrix.subject_ids and back.n_items == matrix.n_items == 5
    (tmp_path / "file").write_text("")
    with pytest.raises(CatError, match=r"cannot create the folder .*file"):
        import_lm_eval(lm_eval_output, tmp_path / "file" / name)
