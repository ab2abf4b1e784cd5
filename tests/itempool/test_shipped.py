"""Pools by name: ``$CAT_POOL_PATH``'s folders, then the repository's ``item_pools/``; a
folder given as a path is that folder, as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import cat
from cat.errors import CatError
from itempool import (
    POOL_PATH_ENV,
    PoolFormatError,
    check_pool,
    load_pool,
    read_questions,
    resolve_pool,
    shipped_pools,
)
from itempool.shipped import SHIPPED_POOLS, is_pool_name
from tests.itempool.test_format import write_clean_pool


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding no pool, and no $CAT_POOL_PATH."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(POOL_PATH_ENV, raising=False)
    return tmp_path


def test_a_shipped_pool_by_name(elsewhere: Path) -> None:
    assert resolve_pool("demo-en") == SHIPPED_POOLS / "demo-en"
    pool = load_pool("demo-en")
    assert pool.dir == SHIPPED_POOLS / "demo-en" and len(pool.items) == 2400
    assert read_questions("demo-en").name == pool.manifest.name
    assert check_pool("demo-en") == []
    assert cat.load_pool("demo-en").dir == pool.dir
    shipped = shipped_pools()
    assert {"demo", "demo-en", "demo-open", "demo-open-en"} <= set(shipped)
    assert "demo_generator" not in shipped  # no pool.json: not a pool


def test_a_folder_given_as_a_path_wins(elsewhere: Path) -> None:
    write_clean_pool(elsewhere / "demo-en")  # a folder of that name in the working folder
    assert load_pool("demo-en").manifest.name == "tiny"
    # A path with a folder part is never looked up by name.
    assert resolve_pool(Path("sub") / "demo-en") == Path("sub") / "demo-en"
    with pytest.raises(PoolFormatError, match=r"^sub/demo-en: no such folder$"):
        load_pool("sub/demo-en")


def test_the_pool_path_comes_first(elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = elsewhere / "mine"
    write_clean_pool(mine / "demo-en")
    write_clean_pool(mine / "tiny-pool")
    monkeypatch.chdir(elsewhere / "mine" / "tiny-pool")  # neither name is a folder here
    monkeypatch.setenv(POOL_PATH_ENV, os.pathsep.join([str(elsewhere / "absent"), str(mine)]))
    assert load_pool("demo-en").dir == mine / "demo-en"  # before item_pools/demo-en
    assert load_pool("tiny-pool").manifest.name == "tiny"
    assert shipped_pools()["demo-en"] == mine / "demo-en"
    assert shipped_pools()["demo"] == SHIPPED_POOLS / "demo"


def test_an_unknown_name_lists_the_pools(elsewhere: Path) -> None:
    with pytest.raises(PoolFormatError) as caught:
        load_pool("mmlu-nope")
    message = str(caught.value)
    assert message.startswith(
        f"mmlu-nope: no such folder, nor a pool of that name in ${POOL_PATH_ENV}"
    )
    assert "demo, demo-en, demo-open, demo-open-en" in message
    with pytest.raises(CatError, match=r"no such folder, nor a pool of that name .*demo-en"):
        cat.load_pool("mmlu-nope")
    problems = check_pool("mmlu-nope")
    assert len(problems) == 1 and "(there: demo, demo-en" in problems[0].message


def test_what_counts_as_a_name() -> None:
    assert is_pool_name("mmlu-pro") and is_pool_name(Path("demo"))
    assert not any(is_pool_name(p) for p in ("", ".", "..", "a/b", "./demo", "/tmp/x"))


def test_a_listed_folder_without_pools_is_no_error(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (elsewhere / "empty").mkdir()
    (elsewhere / "empty" / "notes").mkdir()
    (elsewhere / "empty" / "notes" / "x.json").write_text(json.dumps({}))
    monkeypatch.setenv(POOL_PATH_ENV, str(elsewhere / "empty"))
    assert "notes" not in shipped_pools() and "demo" in shipped_pools()
