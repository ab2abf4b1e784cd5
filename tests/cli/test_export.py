"""``cat export`` after ``cat assess`` against the local server: every stored call once,
with its prompt and raw reply; RESULT.json items carry the reply too."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from synth.local_server import FaultPlan, LocalServer
from tests.cli.test_assess import _irt, _items, calibrated

__all__ = ["calibrated"]  # a fixture, shared with test_assess

runner = CliRunner()
LENGTH = 12


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def assessed(calibrated, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:  # type: ignore[no-untyped-def]
    """Two live models assessed into one run store: (pool, store, llm's RESULT.json)."""
    pool, params, _ = calibrated
    tmp = tmp_path_factory.mktemp("export")
    store = tmp / "calls.db"
    with LocalServer(_items(), {"llm": 0.6, "other": 0.3}, irt=_irt(params)) as server:
        for model in ("llm", "other"):
            code, output = _invoke(
                "assess",
                *("--pool", str(pool), "--model", model, "--base-url", server.base_url),
                *("--length", str(LENGTH), "--store", str(store)),
                *("--out", str(tmp / f"{model}.json")),
            )
            assert code == 0, output
    return pool, store, tmp / "llm.json"


def _stored(store: Path) -> dict[str, tuple[str, str, str]]:
    with sqlite3.connect(store) as db:
        return {r[0]: r[1:] for r in db.execute("SELECT key, model, request, reply FROM calls")}


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_result_items_hold_the_raw_reply_and_parsed_answer(
    assessed: tuple[Path, Path, Path],
) -> None:
    _, store, result_path = assessed
    items = json.loads(result_path.read_text())["items"]
    assert len(items) == LENGTH
    replies = {
        json.loads(request)["messages"][-1]["content"]: reply
        for model, request, reply in _stored(store).values()
        if model == "llm"
    }
    questions = {item.id: item.question for item in _items()}
    for item in items:
        assert isinstance(item["reply"], str) and item["reply"]
        # the reply stored for the prompt that asked this item's question
        (reply,) = [r for prompt, r in replies.items() if questions[item["id"]] in prompt]
        assert item["reply"] == reply
        assert item["answer"] in ("A", "B", "C", "D")
        assert item["response"] == int(item["answer"] == "ABCD"[int(item["id"][1:]) % 4])


def test_export_to_stdout_holds_every_call_once(assessed: tuple[Path, Path, Path]) -> None:
    _, store, result_path = assessed
    stored = _stored(store)
    code, output = _invoke("export", "--store", str(store))
    assert code == 0
    lines = _lines(output)  # nothing but JSON lines on stdout
    assert len(lines) == len(stored) == 2 * LENGTH
    assert sorted(line["key"] for line in lines) == sorted(stored)
    for line in lines:
        model, request, reply = stored[line["key"]]
        assert line["model"] == model and line["reply"] == reply == line["resps"][0][0]
        assert line["prompt"] == json.loads(request)["messages"]
        assert line["item_id"] and line["grade"]["target"] in ("A", "B", "C", "D")
        assert line["exact_match"] == float(line["grade"]["correct"])
    given = {item["id"]: item for item in json.loads(result_path.read_text())["items"]}
    mine = [line for line in lines if line["model"] == "llm"]
    assert {line["item_id"] for line in mine} == set(given)
    assert all(given[line["item_id"]]["reply"] == line["reply"] for line in mine)
    code, output = _invoke("export", "--store", str(store), "--model", "other")
    assert code == 0 and {line["model"] for line in _lines(output)} == {"other"}
    assert len(_lines(output)) == LENGTH


def test_export_to_a_file_with_the_pool(assessed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    pool, store, _ = assessed
    out = tmp_path / "calls.jsonl"
    code, output = _invoke("export", "--store", str(store), "--out", str(out), "--pool", str(pool))
    assert code == 0, output
    assert output.strip() == f"{2 * LENGTH} calls written to {out}"
    questions = {item.id: item for item in _items()}
    for line in _lines(out.read_text(encoding="utf-8")):
        item = questions[line["item_id"]]
        assert line["doc"]["question"] == item.question and line["target"] == item.answer
        assert line["doc_id"] == int(item.id[1:])  # its place in the pool


def test_a_model_or_pool_the_store_does_not_hold_is_refused(
    assessed: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, store, _ = assessed
    out = tmp_path / "calls.jsonl"
    code, output = _invoke("export", "--store", str(store), "--model", "nosuch", "--out", str(out))
    assert code == 2 and not out.exists()
    assert "no stored call of model 'nosuch'; its models: llm, other" in output
    # demo-en's items are not the ones these calls asked.
    code, output = _invoke("export", "--store", str(store), "--pool", "demo-en", "--out", str(out))
    assert code == 2 and not out.exists()
    assert "items its calls asked" in output and "is in pool" in output


def test_bad_stores_and_outputs_are_one_line(tmp_path: Path) -> None:
    code, output = _invoke("export", "--store", str(tmp_path / "none.db"))
    assert code == 2 and output.startswith("error: ") and "no such run store" in output
    assert len(output.strip().splitlines()) == 1 and not (tmp_path / "none.db").exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    code, output = _invoke("export", "--store", str(other))
    assert code == 2 and "not a run store" in output
    code, output = _invoke(
        "export", "--store", str(other), "--out", str(tmp_path / "no" / "such" / "x.jsonl")
    )
    assert code == 2 and output.startswith("error: --out")


def test_a_resumed_assessment_keeps_the_replies_of_its_first_part(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    pool, params, _ = calibrated
    out = tmp_path / "r.json"
    args = [
        *("assess", "--pool", str(pool), "--model", "llm", "--length", "20"),
        *("--store", str(tmp_path / "calls.db"), "--out", str(out), "--max-attempts", "1"),
    ]
    flaky = FaultPlan(rate_500=0.1)
    with LocalServer(_items(), {"llm": 0.5}, irt=_irt(params), faults=flaky) as server:
        code, output = _invoke(*args, "--base-url", server.base_url)
        assert code == 2 and not out.exists()
    with sqlite3.connect(tmp_path / "calls.db") as db:  # the checkpoint of the first part
        (saved,) = db.execute("SELECT value FROM meta WHERE name LIKE 'assess:%'").fetchone()
    first = json.loads(saved)["items"]
    assert 0 < len(first) < 20 and all(isinstance(item["reply"], str) for item in first)
    with LocalServer(_items(), {"llm": 0.5}, irt=_irt(params)) as healthy:
        code, output = _invoke(*args, "--base-url", healthy.base_url, "--resume")
        assert code == 0 and "resuming after" in output, output
    items = json.loads(out.read_text())["items"]
    assert len(items) == 20 and all(isinstance(item["reply"], str) for item in items)
    assert items[: len(first)] == first


def test_a_simulated_examinee_has_no_reply(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool, _, _ = calibrated
    out = tmp_path / "sim.json"
    code, output = _invoke(
        "assess", "--pool", str(pool), "--model", "sim:0.5", "--length", "5", "--out", str(out)
    )
    assert code == 0, output
    items = json.loads(out.read_text())["items"]
    assert items and all("reply" not in item and "answer" not in item for item in items)
