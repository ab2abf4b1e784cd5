"""Reading a pool's questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from synth.errors import SynthError
from synth.items import ItemType, PoolItem, read_pool
from tests.synth.pools import EN_ITEMS


def test_reads_language_and_items(en_pool: Path, zh_pool: Path) -> None:
    pool = read_pool(en_pool)
    assert pool.language == "en" and len(pool.items) == 30 and pool.items[0].id == "en000"
    assert read_pool(zh_pool).language == "zh"


def test_items_check_their_answers() -> None:
    with pytest.raises(ValidationError, match="not offered"):
        PoolItem(id="x", question="q", options={"A": "1", "B": "2"}, answer="C")
    with pytest.raises(ValidationError, match="one letter"):
        PoolItem(id="x", question="q", options={"A": "1", "B": "2"}, answer="AB")
    multi = PoolItem(id="x", type="multi", question="q", options={"A": "1", "B": "2"}, answer="AB")
    assert multi.type is ItemType.MULTI
    with pytest.raises(ValidationError, match="repeats"):
        PoolItem(id="x", type="order", question="q", options={"A": "1", "B": "2"}, answer="AA")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "no pool.json"),
        ({"pool.json": "{nope"}, "cannot read the manifest"),
        ({"pool.json": '{"language": "fr"}'}, "language must be"),
        ({"pool.json": "{}"}, "no items.jsonl"),
        ({"pool.json": "{}", "items.jsonl": '{"id": "1"}\n'}, "line 1: question"),
        ({"pool.json": "{}", "items.jsonl": "\n"}, "no items"),
    ],
)
def test_bad_pools_fail_with_file_and_line(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(SynthError, match=message):
        read_pool(tmp_path)


def test_duplicate_ids_are_named(tmp_path: Path) -> None:
    (tmp_path / "pool.json").write_text(json.dumps({"language": "en"}))
    line = EN_ITEMS[0].model_dump_json() + "\n"
    (tmp_path / "items.jsonl").write_text(line + line)
    with pytest.raises(SynthError, match="line 2: duplicate item id 'en000'"):
        read_pool(tmp_path)
    with pytest.raises(SynthError, match="no pool folder"):
        read_pool(tmp_path / "none")
