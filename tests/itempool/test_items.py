"""Reading a pool's questions."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from itempool import ItemType, PoolFormatError, PoolItem, load_pool, read_questions
from tests.synth.pools import EN_ITEMS


def test_reads_language_and_items(en_pool: Path, zh_pool: Path) -> None:
    pool = read_questions(en_pool)
    assert pool.language == "en" and len(pool.items) == 30 and pool.items[0].id == "en000"
    assert read_questions(zh_pool).language == "zh"


def test_items_check_their_answers() -> None:
    with pytest.raises(ValidationError, match="not offered"):
        PoolItem(id="x", question="q", options={"A": "1", "B": "2"}, answer="C")
    with pytest.raises(ValidationError, match="one letter"):
        PoolItem(id="x", question="q", options={"A": "1", "B": "2"}, answer="AB")
    multi = PoolItem(id="x", type="multi", question="q", options={"A": "1", "B": "2"}, answer="AB")
    assert multi.type is ItemType.MULTI
    with pytest.raises(ValidationError, match="repeats"):
        PoolItem(id="x", type="order", question="q", options={"A": "1", "B": "2"}, answer="AA")


MANIFEST = '{"name": "p", "language": "en"}'


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "pool.json: missing"),
        ({"pool.json": "{nope"}, "pool.json:1: not valid JSON"),
        (
            {"pool.json": '{"name": "p", "language": "French"}'},
            "pool.json: language: 'french' is not a language code",
        ),
        # The lenient reader took a missing language for English; the strict one asks.
        ({"pool.json": '{"name": "p"}', "items.jsonl": ""}, "pool.json: language: Field required"),
        ({"pool.json": MANIFEST}, "items.jsonl: missing"),
        ({"pool.json": MANIFEST, "items.jsonl": '{"id": "1"}\n'}, "items.jsonl:1: question"),
        ({"pool.json": MANIFEST, "items.jsonl": "\n"}, "items.jsonl: no items"),
    ],
)
def test_bad_pools_fail_with_file_and_line(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(PoolFormatError, match=message):
        read_questions(tmp_path)


def test_duplicate_ids_are_named(tmp_path: Path) -> None:
    (tmp_path / "pool.json").write_text(MANIFEST)
    line = EN_ITEMS[0].model_dump_json() + "\n"
    (tmp_path / "items.jsonl").write_text(line + line)
    with pytest.raises(PoolFormatError, match=r"items\.jsonl:2: duplicate item id 'en000'"):
        read_questions(tmp_path)
    with pytest.raises(PoolFormatError, match="no such folder"):
        read_questions(tmp_path / "none")


def test_questions_are_read_past_a_stale_params_file(tmp_path: Path) -> None:
    """Asking and calibrating need the questions only: a params.csv left from an older
    item set does not stop them, while ``load_pool`` refuses it."""
    (tmp_path / "pool.json").write_text(MANIFEST)
    (tmp_path / "items.jsonl").write_text(EN_ITEMS[0].model_dump_json() + "\n")
    (tmp_path / "params.csv").write_text("item_id,a,b\nold-item,1.0,0.0\n")
    assert [i.id for i in read_questions(tmp_path).items] == ["en000"]
    with pytest.raises(PoolFormatError, match=r"params\.csv:2: item 'old-item' is not in"):
        load_pool(tmp_path)


def test_open_items_carry_references_a_numeric_answer_and_a_top_score() -> None:
    item = PoolItem.model_validate_json(
        '{"id": "c1", "type": "open", "question": "BMI of 70 kg at 1.75 m?", '
        '"references": ["about 22.9"], "numeric_answer": {"value": 22.86, "abs_tol": 0.1}, '
        '"rubric": "Formula, then the value."}'
    )
    assert item.type is ItemType.OPEN and item.max_score == 4
    assert item.numeric_answer is not None and item.numeric_answer.rel_tol == 0.0
    assert (
        PoolItem(id="x", type="open", question="q", references=("r",), max_score=2).max_score == 2
    )
    multi = PoolItem(
        id="m", type="multi", question="q", options={"A": "1", "B": "2"}, answer="A", max_score=3
    )
    assert multi.max_score == 3
    assert PoolItem(id="x", question="q", options={"A": "1", "B": "2"}, answer="A").max_score == 1
    similarity = PoolItem.model_validate(
        {"id": "s", "type": "open", "continuous": True, "question": "q", "references": ["r"]}
    )
    assert similarity.continuous and similarity.max_score == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "open"}, "an open item needs references, a numeric_answer, or both"),
        ({"type": "open", "references": [" "]}, "a reference answer is empty"),
        (
            {"type": "open", "references": ["r"], "options": {"A": "1", "B": "2"}},
            "an open item has no options and no answer letter",
        ),
        ({"type": "open", "references": ["r"], "max_score": 0}, "greater than or equal to 1"),
        ({"type": "open", "references": ["r"], "max_score": None}, "not null"),
        ({"type": "open", "numeric_answer": {"value": 1, "abs_tol": -1}}, "abs_tol"),
        ({"options": {"A": "1", "B": "2"}, "answer": "A", "max_score": 3}, "scores 0 or 1"),
        ({"options": {"A": "1", "B": "2"}, "answer": "A", "references": ["r"]}, "for open items"),
        ({"options": {"A": "1", "B": "2"}}, "needs its answer"),
        (
            {"options": {"A": "1", "B": "2"}, "answer": "A", "continuous": True},
            "continuous is for open items",
        ),
        (
            {"type": "open", "references": ["r"], "continuous": True, "max_score": 4},
            "its max_score is 1, not 4",
        ),
    ],
)
def test_bad_open_and_scored_items_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PoolItem.model_validate({"id": "x", "question": "q", **fields})
