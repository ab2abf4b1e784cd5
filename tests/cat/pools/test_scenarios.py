"""Reading each item's scenario from an item table."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cat.errors import CatError
from cat.pools.scenarios import read_item_scenarios


def test_csv_gz_and_jsonl_give_the_same_codes(tmp_path: Path) -> None:
    csv_path = tmp_path / "items.csv.gz"
    with gzip.open(csv_path, "wt", encoding="utf-8") as fh:
        fh.write('question_id,category,question\n1,law,"a, b"\n2,math,x\n3,law,y\n')
    jsonl_path = tmp_path / "items.jsonl"
    jsonl_path.write_text(
        "".join(json.dumps({"id": i, "scenario": s}) + "\n" for i, s in [(1, "law"), (2, "math")])
        + "\n"
        + json.dumps({"id": "3", "scenario": "law"})
        + "\n"
    )
    ids = ("3", "2", "1")
    from_csv = read_item_scenarios(csv_path, ids, "category")
    assert from_csv.codes == (0, 1, 0) and from_csv.names == ("law", "math")
    assert read_item_scenarios(jsonl_path, ids) == from_csv


def test_bad_tables_fail_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,topic\n1,law\n")
    with pytest.raises(CatError, match="no column 'scenario'"):
        read_item_scenarios(path, ("1",))
    with pytest.raises(CatError, match=r"no scenario for 1 of the 2 items \(e.g. 9\)"):
        read_item_scenarios(path, ("1", "9"), "topic")
    with pytest.raises(CatError, match="no such file"):
        read_item_scenarios(tmp_path / "none.csv", ("1",))
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": 1}\n')
    with pytest.raises(CatError, match="line 1"):
        read_item_scenarios(bad, ("1",))


def test_codes_from_a_pools_items() -> None:
    from cat.pools.scenarios import scenarios_of
    from itempool import PoolItem

    items = [
        PoolItem(id=i, scenario=s, question=f"q {i}", options={"A": "1", "B": "2"}, answer="A")
        for i, s in (("1", "law"), ("2", "math"), ("3", "law"))
    ]
    got = scenarios_of(items, ("3", "2", "1"))
    assert got.codes == (0, 1, 0) and got.names == ("law", "math")
