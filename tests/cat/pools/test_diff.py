"""``diff_pools``: two versions of a pool compared, as the model ``cat pool diff`` dumps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cat.errors import CatError
from cat.pools.diff import Z_MOVED, diff_pools
from cat.pools.loading import load_pool
from tests.itempool.test_format import write_clean_pool, write_lines


def test_moved_added_dropped_and_references(tmp_path: Path) -> None:
    old = write_clean_pool(tmp_path / "old")
    new = write_clean_pool(tmp_path / "new")
    lines = (new / "params.csv").read_text().splitlines()
    # q3's b from 0.5 to 1.5 (se_b 0.2 in both: z = 1.0 / √0.08 ≈ 3.54); q4 dropped
    lines = [ln.replace("q3,1.5,0.5,", "q3,1.5,1.5,") for ln in lines if not ln.startswith("q4")]
    write_lines(new / "params.csv", lines)
    items = [ln for ln in (new / "items.jsonl").read_text().splitlines() if '"q4"' not in ln]
    write_lines(new / "items.jsonl", items)
    refs = (new / "reference.jsonl").read_text().replace('"theta": 1.7', '"theta": 1.9')
    (new / "reference.jsonl").write_text(refs)
    diff = diff_pools(load_pool(old), load_pool(new))
    dumped = diff.model_dump(mode="json")
    assert set(dumped) == {"old", "new", "items", "references", "z_moved"}
    assert dumped["old"] == {"name": "tiny", "version": "2", "n_items": 5}
    assert dumped["new"]["n_items"] == 4 and dumped["z_moved"] == Z_MOVED
    assert (diff.items.shared, diff.items.added, diff.items.dropped) == (4, [], ["q4"])
    assert [c.item_id for c in diff.items.moved] == ["q3"]
    assert set(dumped["items"]["moved"][0]) == {
        "item_id", "a_old", "a_new", "b_old", "b_new", "z_b"
    }  # fmt: skip
    assert diff.items.moved[0].z_b == pytest.approx(1.0 / 0.08**0.5)
    assert diff.items.mean_b_shift == pytest.approx(0.25)
    assert diff.items.no_standard_errors == 0
    refs_diff = diff.references
    assert (refs_diff.shared, refs_diff.added) == (3, [])
    assert refs_diff.max_abs_theta_change == pytest.approx(0.2)
    largest = refs_diff.largest[0]
    assert largest.subject_id == "m-high" and largest.change == pytest.approx(0.2)
    assert json.loads(json.dumps(dumped)) == dumped  # plain JSON, as --json writes it


def test_both_pools_need_parameters(tmp_path: Path) -> None:
    calibrated = load_pool(write_clean_pool(tmp_path / "a"))
    bare = load_pool(write_clean_pool(tmp_path / "b", calibrated=False))
    with pytest.raises(CatError, match="both pools need parameters"):
        diff_pools(calibrated, bare)
