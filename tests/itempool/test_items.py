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
        ({"pool.json": '{"name": "p", "language": "fr"}'}, "pool.json: language: Input should"),
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
