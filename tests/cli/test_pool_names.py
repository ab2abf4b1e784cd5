"""Commands take a pool by name (``--pool demo-en`` from any folder) and read gzipped
questions (``items.jsonl.gz``) wherever they read a pool."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from itempool import ITEMS, ITEMS_GZ, POOL_PATH_ENV
from itempool.item_files import write_text
from tests.itempool.test_format import write_clean_pool

runner = CliRunner()


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding no pool, and no $CAT_POOL_PATH."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(POOL_PATH_ENV, raising=False)
    return tmp_path


def _invoke(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_pool_info_and_validate_by_name(elsewhere: Path) -> None:
    code, output = _invoke("pool", "info", "demo-en", "--json", "info.json")
    assert code == 0, output
    assert json.loads((elsewhere / "info.json").read_text())["pool"]["n_items"] == 2400
    code, output = _invoke("pool", "validate", "demo-en")
    assert code == 0 and output.strip() == "pool demo-en: 2,400 items, no problems"


def test_assess_by_name(elsewhere: Path) -> None:
    code, output = _invoke(
        "assess", "--pool", "demo-en", "--model", "sim:0.5", "--length", "5", "--out", "r.json"
    )
    assert code == 0, output
    result = json.loads((elsewhere / "r.json").read_text())
    assert result["n_items"] == 5 and result["pool"]["name"] == "demo-en"


def test_an_unknown_name_is_one_line_listing_the_pools(elsewhere: Path) -> None:
    code, output = _invoke("assess", "--pool", "mmlu-nope", "--model", "sim:0")
    assert code == 2
    line = output.strip()
    assert "\n" not in line and line.startswith("error: mmlu-nope: no such folder, nor a pool")
    assert "(there: demo, demo-en, demo-open, demo-open-en" in line


def test_a_pool_of_the_pool_path_by_name(elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_clean_pool(elsewhere / "mine" / "tiny-pool")
    monkeypatch.setenv(POOL_PATH_ENV, str(elsewhere / "mine"))
    code, output = _invoke("pool", "validate", "tiny-pool")
    assert code == 0 and output.strip() == "pool tiny-pool: 5 items, no problems"


def test_gzipped_questions_through_the_commands(elsewhere: Path) -> None:
    old = write_clean_pool(elsewhere / "old")
    new = elsewhere / "new"
    shutil.copytree(old, new)
    write_text(new / ITEMS_GZ, (new / ITEMS).read_text(encoding="utf-8"))
    (new / ITEMS).unlink()
    code, output = _invoke("pool", "validate", new)
    assert code == 0 and output.strip() == f"pool {new}: 5 items, no problems"
    code, output = _invoke("pool", "info", new, "--json", "info.json")
    assert code == 0 and json.loads((elsewhere / "info.json").read_text())["pool"]["n_items"] == 5
    code, output = _invoke("pool", "diff", old, new)
    assert code == 0 and "items: 5 in both, 0 added, 0 dropped" in output
    shutil.copy(old / ITEMS, new / ITEMS)  # both: refused, naming them
    code, output = _invoke("pool", "validate", new)
    assert code == 2 and "items.jsonl, items.jsonl.gz: both items.jsonl and" in output


def test_pool_list_shows_the_pools_found_by_name(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_clean_pool(elsewhere / "mine" / "tiny-pool")
    (elsewhere / "mine" / "broken").mkdir()
    (elsewhere / "mine" / "broken" / "pool.json").write_text("[1]")
    monkeypatch.setenv(POOL_PATH_ENV, str(elsewhere / "mine"))
    code, output = _invoke("pool", "list", "--json", "pools.json")
    assert code == 0, output
    listed = {row["name"]: row for row in json.loads((elsewhere / "pools.json").read_text())}
    assert list(listed)[:2] == ["broken", "tiny-pool"]  # $CAT_POOL_PATH first
    assert listed["tiny-pool"]["n_items"] == 5 and listed["tiny-pool"]["problem"] is None
    assert listed["broken"]["problem"] == "pool.json is not a JSON object"
    mmlu = listed["mmlu-pro"]
    assert (mmlu["n_items"], mmlu["model"], mmlu["n_references"]) == (12032, "3pl", 32)
    assert mmlu["protocol"] == "mmlu-pro-official" and listed["demo-open"]["model"] is None
    assert "searched, in order: mine, the repository's item_pools/" in output
