"""``recalibrate_pool``: the new pool version written, and what it refuses."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cat.errors import CatError
from cat.pools.loading import load_pool
from cat.pools.recalibration import METHODS, Method
from cat.pools.recalibration_job import (
    LinkingConstants,
    NewGroupScale,
    RecalibratedPool,
    new_item_lines,
    next_version,
    recalibrate_pool,
)
from irt.models import ItemParams
from irt.simulate import simulate_responses
from itempool.formats.responses import write_jsonl
from tests.itempool.test_format import item, write_clean_pool


def test_methods_are_the_enum() -> None:
    assert METHODS == tuple(m.value for m in Method) == ("anchor", "concurrent")


@pytest.mark.parametrize(
    ("version", "after"), [(None, "2"), ("1", "2"), (9, "10"), ("v2", "v2.1"), ("2.1", "2.1.1")]
)
def test_next_version(version: object, after: str) -> None:
    assert next_version(version) == after


def test_new_item_lines(tmp_path: Path) -> None:
    assert new_item_lines(None, ()) == []
    with pytest.raises(CatError, match=r"^1 item is not in the pool \(e.g. n1\): give"):
        new_item_lines(None, ("n1",))
    with pytest.raises(CatError, match=r"^2 items are not in the pool"):
        new_item_lines(None, ("n1", "n2"))
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(item("n2")) + "\n\n" + json.dumps(item("n1")) + "\n")
    lines = new_item_lines(path, ("n1", "n2"))
    assert [json.loads(line)["id"] for line in lines] == ["n2", "n1"]  # the file's order
    with pytest.raises(CatError, match=r"^new.jsonl lacks 1 new item \(e.g. n3\)$"):
        new_item_lines(path, ("n1", "n3"))
    path.write_text(json.dumps(item("n1")) + "\n" + json.dumps(item("n2", answer="Z")) + "\n")
    with pytest.raises(CatError, match=r"^new.jsonl:2: not a valid item \(.*'Z'"):
        new_item_lines(path, ("n1", "n2"))


@pytest.fixture
def setting(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The five-item test pool (3PL), its items answered by 400 new subjects who also
    answer one new item ``n1``, and that item's line."""
    pool = write_clean_pool(tmp_path / "pool")
    items = (pool / "items.jsonl").read_text()
    (pool / "items.jsonl").write_text(items.rstrip("\n"))  # no final newline
    params = load_pool(pool).params
    assert params is not None
    rng = np.random.default_rng(3)
    more = ItemParams(
        item_ids=(*params.item_ids, "n1"),
        a=np.append(params.a, 1.2),
        b=np.append(params.b, 0.3),
        c=np.append(params.c, 0.1),
        d=np.append(params.d, 1.0),
        model=params.model,
    )
    responses = simulate_responses(more, rng.normal(size=400), rng)
    responses = replace(responses, subject_ids=tuple(f"s{k:03d}" for k in range(400)))
    write_jsonl(responses, tmp_path / "new.jsonl")
    (tmp_path / "n1.jsonl").write_text(json.dumps(item("n1")) + "\n")
    return pool, tmp_path / "new.jsonl", tmp_path / "n1.jsonl"


@pytest.mark.parametrize("method", list(Method))
def test_writes_the_next_version(
    tmp_path: Path, setting: tuple[Path, Path, Path], method: Method
) -> None:
    pool, responses, new_items = setting
    out = tmp_path / "versions" / "v3"  # parents are created
    result = recalibrate_pool([responses], pool, out, method, new_items, 500)
    assert isinstance(result, RecalibratedPool)
    assert (result.out, result.version, result.previous_version) == (str(out), "3", "2")
    assert (result.method, result.n_subjects, result.n_items) == (method, 400, 6)
    assert result.new_items == ("n1",) and result.thin_items == ("n1",)  # < 500 answers
    assert result.n_references == 3 + 400
    scale = LinkingConstants if method is Method.CONCURRENT else NewGroupScale
    assert isinstance(result.scale, scale)
    new = load_pool(out)
    assert [i.id for i in new.items] == ["q1", "q2", "q3", "q4", "q5", "n1"]
    assert new.params is not None and new.params.item_ids[-1] == "n1"
    manifest = json.loads((out / "pool.json").read_text())
    assert manifest["version"] == "3" and manifest["history"] == [
        {"version": 2, "calibration": None}
    ]
    calibration = manifest["calibration"]
    assert calibration["method"] == f"recalibration ({method.value})"
    assert calibration["scale"] == result.scale.model_dump()
    assert calibration["from"] == {"pool": str(pool), "version": 2}
    assert calibration["thin_items"] == ["n1"] and calibration["min_responses"] == 500


def test_a_new_items_scenario_joins_the_manifest(
    tmp_path: Path, setting: tuple[Path, Path, Path]
) -> None:
    pool, responses, _ = setting
    renal = tmp_path / "renal.jsonl"
    renal.write_text(json.dumps(item("n1", scenario="renal")) + "\n")
    out = tmp_path / "v3"
    recalibrate_pool([responses], pool, out, Method.ANCHOR, renal, 30)
    new = load_pool(out)  # the one strict reader: every item's scenario is listed
    assert new.manifest.scenarios[-1] == "renal"
    manifest = json.loads((out / "pool.json").read_text())
    assert manifest["scenarios"][:2] == ["dosing", {"id": "units", "title": "Unit conversion"}]
    assert manifest["calibration"]["new_scenarios"] == ["renal"]


def test_refuses_before_writing(tmp_path: Path, setting: tuple[Path, Path, Path]) -> None:
    pool, responses, _ = setting
    out = tmp_path / "busy"
    out.mkdir()
    (out / "x").write_text("")
    with pytest.raises(CatError, match="exists and is not empty"):
        recalibrate_pool([responses], pool, out)
    with pytest.raises(CatError, match="give their questions with items"):
        recalibrate_pool([responses], pool, tmp_path / "v3")
    with pytest.raises(CatError, match="unknown method 'magic'; choose from anchor, concurrent"):
        recalibrate_pool([responses], pool, tmp_path / "v3", "magic")
    assert not (tmp_path / "v3").exists()
