"""A benchmark's file in each common shape becomes a pool with no --map: MMLU as Parquet,
CMMLU as a CSV with A–D columns, ARC with labelled choices, MedQA with an options object,
a ``datasets`` save_to_disk folder (one dataset, or a dict of splits); ids made from the
content; copies of a question reported or merged."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.errors import CatError
from cat.pools.importer import import_questions
from cat.pools.question_shapes import content_id
from itempool import load_pool, read_questions
from tests.cat.pools.benchmark_files import save_to_disk

MMLU = [
    {"question": "2 + 2 = ?", "subject": "math", "choices": ["3", "4", "5", "6"], "answer": 1},
    {"question": "Capital of France?", "subject": "geo", "choices": ["Rome", "Paris"], "answer": 1},
    {"question": "H2O is?", "subject": "chem", "choices": ["water", "salt", "air"], "answer": 0},
]


def _items(pool: Path) -> dict[str, Any]:
    return {item.question: item for item in read_questions(pool).items}


def test_mmlu_as_parquet_needs_no_mapping_and_gets_ids_from_its_content(tmp_path: Path) -> None:
    source = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(MMLU), source)
    done = import_questions(source, {}, tmp_path / "mmlu", "mmlu", "en")
    assert done.count == 3 and done.ids_made and not done.duplicates
    assert done.mapping == {
        "question": "question",
        "options": "choices",
        "scenario": "subject",
        "key": "answer",
    }
    items = _items(tmp_path / "mmlu")
    assert items["2 + 2 = ?"].answer == "B" and items["2 + 2 = ?"].options["D"] == "6"
    assert items["H2O is?"].answer == "A" and items["H2O is?"].scenario == "chem"
    again = import_questions(source, {}, tmp_path / "again", "mmlu", "en")
    assert again.count == 3
    assert [i.id for i in read_questions(tmp_path / "again").items] == [
        i.id for i in read_questions(tmp_path / "mmlu").items
    ]
    first = items["2 + 2 = ?"]
    assert first.id == content_id(first.question, first.options)
    assert list(load_pool(tmp_path / "mmlu").manifest.scenarios) == ["math", "geo", "chem"]


def test_cmmlu_csv_with_letter_columns_in_chinese(tmp_path: Path) -> None:
    source = tmp_path / "anatomy.csv"
    with source.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["", "Question", "A", "B", "C", "D", "Answer"])
        writer.writerow(["0", "心脏有几个腔？", "两个", "三个", "四个", "五个", "C"])
        writer.writerow(["1", "人体最大的器官是？", "肝", "皮肤", "肺", "脑", "B"])
    done = import_questions(source, {}, tmp_path / "cmmlu", "cmmlu", "zh")
    assert done.count == 2 and done.mapping["options"] == "A,B,C,D"
    items = _items(tmp_path / "cmmlu")
    assert (
        items["心脏有几个腔？"].answer == "C" and items["人体最大的器官是？"].options["B"] == "皮肤"
    )


def test_arc_labelled_choices_and_medqa_options_objects(tmp_path: Path) -> None:
    arc = tmp_path / "arc.jsonl"
    rows = [
        {
            "id": "Mercury_1",
            "question": "Which is a metal?",
            "choices": {"text": ["wood", "iron", "glass", "cloth"], "label": ["1", "2", "3", "4"]},
            "answerKey": "2",
        },
        {
            "id": "Mercury_2",
            "question": "Which is a gas?",
            "choices": {"text": ["oxygen", "stone"], "label": ["A", "B"]},
            "answerKey": "A",
        },
    ]
    arc.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_questions(arc, {}, tmp_path / "arc", "arc", "en")
    items = _items(tmp_path / "arc")
    # Digit labels become letters by position, and the key follows its label.
    assert items["Which is a metal?"].answer == "B" and items["Which is a metal?"].id == "Mercury_1"
    assert items["Which is a gas?"].answer == "A"
    medqa = tmp_path / "medqa.jsonl"
    record = {
        "question": "First-line drug?",
        "answer": "metformin",
        "options": {"A": "insulin", "B": "metformin", "C": "aspirin"},
        "answer_idx": "B",
        "meta_info": "step1",
    }
    medqa.write_text(json.dumps(record) + "\n")
    import_questions(medqa, {}, tmp_path / "medqa", "medqa", "en")
    assert _items(tmp_path / "medqa")["First-line drug?"].answer == "B"


def test_save_to_disk_folders_one_dataset_or_a_dict_of_splits(tmp_path: Path) -> None:
    one = save_to_disk(tmp_path / "saved", MMLU)
    assert import_questions(one, {}, tmp_path / "p1", "p", "en").count == 3
    both = tmp_path / "dict"
    save_to_disk(both / "test", MMLU)
    save_to_disk(both / "dev", MMLU[:1])
    (both / "dataset_dict.json").write_text(json.dumps({"splits": ["dev", "test"]}))
    assert import_questions(both, {}, tmp_path / "p2", "p", "en").count == 3  # test
    assert import_questions(both, {}, tmp_path / "p3", "p", "en", split="dev").count == 1
    with pytest.raises(CatError, match=r"no split 'val'; it holds dev, test: give (--)?split"):
        import_questions(both, {}, tmp_path / "p4", "p", "en", split="val")
    with pytest.raises(CatError, match="not a dataset folder"):
        import_questions(tmp_path / "p1", {}, tmp_path / "p5", "p", "en")
    parquet = tmp_path / "one.parquet"
    pq.write_table(pa.Table.from_pylist(MMLU), parquet)
    with pytest.raises(CatError, match=r"one\.parquet is one file; a split is of a dataset folder"):
        import_questions(parquet, {}, tmp_path / "p6", "p", "en", split="dev")
    (tmp_path / "empty.json").write_text("[]")
    with pytest.raises(CatError, match=r"empty\.json: no questions"):
        import_questions(tmp_path / "empty.json", {}, tmp_path / "p7", "p", "en")


def test_copies_of_a_question_are_reported_or_merged(tmp_path: Path) -> None:
    source = tmp_path / "q.jsonl"
    rows = [*MMLU, dict(MMLU[0]), {**MMLU[1], "question": "Capital  of France?"}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = import_questions(source, {}, tmp_path / "kept", "p", "en")
    assert kept.count == 5 and kept.merged == 0 and len(kept.duplicates) == 2
    ids = [i.id for i in read_questions(tmp_path / "kept").items]
    assert ids[3] == ids[0] + "-2" and len(set(ids)) == 5
    merged = import_questions(source, {}, tmp_path / "merged", "p", "en", merge_duplicates=True)
    assert merged.count == 3 and merged.merged == 2


def test_a_key_the_options_do_not_have_names_its_row(tmp_path: Path) -> None:
    source = tmp_path / "one-based.parquet"
    pq.write_table(pa.Table.from_pylist([{**MMLU[0], "answer": 4}]), source)
    with pytest.raises(
        CatError, match=r"one-based.parquet:row 1: answer position 4 is outside 0..3"
    ):
        import_questions(source, {}, tmp_path / "p", "p", "en")
    assert not (tmp_path / "p").exists()


def test_the_command_says_which_columns_it_found(tmp_path: Path) -> None:
    source = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist([*MMLU, MMLU[2]]), source)
    out = tmp_path / "mmlu"
    args = ["pool", "import", "questions", str(source), "--out", str(out), "--language", "en"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "columns found: question=question, options=choices, scenario=subject, key=answer" in (
        result.output
    )
    assert "ids made from each question and its options" in result.output
    assert "note: 1 copy of a question the file holds already" in result.output
    assert f"imported 4 questions from {source} into {out}" in result.output
