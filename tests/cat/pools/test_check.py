"""``validate_pool``: what ``cat pool validate`` prints, as data."""

from __future__ import annotations

from pathlib import Path

from cat.pools.check import PoolCheck, validate_pool
from tests.itempool.test_format import BROKEN, write_broken_pool, write_clean_pool


def test_a_clean_pool_loads_and_counts_its_items(tmp_path: Path) -> None:
    check = validate_pool(write_clean_pool(tmp_path / "pool"))
    assert check == PoolCheck(dir=str(tmp_path / "pool"), problems=(), n_items=5)
    assert check.ok and (check.errors, check.warnings) == (0, 0)


def test_a_broken_pool_lists_every_problem_and_is_not_loaded(tmp_path: Path) -> None:
    check = validate_pool(write_broken_pool(tmp_path / "pool"))
    assert [(p.file, p.line) for p in check.problems] == [(f, n) for f, n, _ in BROKEN]
    assert not check.ok and check.errors == len(BROKEN) and check.n_items is None


def test_warnings_do_not_stop_a_pool(tmp_path: Path) -> None:
    pool = write_clean_pool(tmp_path / "pool")
    params = pool / "params.csv"
    params.write_text(params.read_text().replace("q5,2.0,", "q5,11.0,"))
    check = validate_pool(pool)
    assert check.ok and (check.errors, check.warnings, check.n_items) == (0, 1, 5)
    assert [str(p) for p in check.problems] == [
        "params.csv:4: warning: a = 11.0 is unusually large (> 10)"
    ]


def test_a_missing_folder(tmp_path: Path) -> None:
    check = validate_pool(tmp_path / "nope")
    assert not check.ok and [p.message for p in check.problems] == ["no such folder"]
