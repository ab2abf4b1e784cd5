"""Reasoning models through ``cat assess``: only the final answer is graded, under the
MMLU-Pro pool's first-statement rule too; the thinking is kept in the store and in ``cat
export``; reasoning tokens and replies cut off at the token limit are reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import cat
from cat.cli.app import app
from synth.extractors import mmlu_pro_official
from synth.local_server import LocalServer
from synth.reasoning import split_reasoning
from synth.store import RunStore

runner = CliRunner()


@pytest.fixture(scope="module")
def pool() -> Any:
    return cat.load_pool("mmlu-pro")


def _assess(url: str, model: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"{model}.json"
    result = runner.invoke(
        app,
        [
            "assess",
            *("--pool", "mmlu-pro", "--model", model, "--length", "8"),
            *("--base-url", url, "--store", str(tmp_path / "run.db"), "--out", str(out)),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    written: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return written


def test_a_think_block_that_weighs_a_wrong_letter_is_not_graded(pool: Any, tmp_path: Path) -> None:
    with LocalServer(pool.items, {"r1": 0.7}, thinking={"r1": "inline"}) as server:
        result = _assess(server.base_url, "r1", tmp_path)
    for item in result["items"]:
        reply = item["reply"]
        assert reply.startswith("<think>") and "the answer is (" in reply
        final = split_reasoning(reply).answer
        # the official rule reads the first "answer is": the wrong letter in the block
        assert mmlu_pro_official(reply) != mmlu_pro_official(final)
        assert item["answer"] == mmlu_pro_official(final)


def test_reasoning_in_its_own_field_is_stored_exported_and_counted(
    pool: Any, tmp_path: Path
) -> None:
    with LocalServer(pool.items, {"r2": 0.7}, thinking={"r2": "field"}) as server:
        result = _assess(server.base_url, "r2", tmp_path)
    usage = result["usage"]
    assert usage["reasoning_tokens"] > 0 and usage["truncated"] == 0
    with RunStore(tmp_path / "run.db") as store:
        calls = list(store.iter_calls(["r2"]))
    assert len(calls) == 8
    assert all(c.reply.reasoning and "At first sight" in c.reply.reasoning for c in calls)
    assert all(c.reply.finish_reason == "stop" for c in calls)
    export = tmp_path / "calls.jsonl"
    exported = runner.invoke(
        app, ["export", "--store", str(tmp_path / "run.db"), "--out", str(export)]
    )
    assert exported.exit_code == 0, exported.output
    lines = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 8
    assert all(line["reasoning"].startswith("At first sight") for line in lines)
    assert all(line["usage"]["reasoning_tokens"] > 0 for line in lines)


def test_replies_cut_at_the_token_limit_are_counted(pool: Any, tmp_path: Path) -> None:
    # The local server counts a word a token: one word cuts every reply.
    with LocalServer(pool.items, {"short": 0.7}) as server:
        result = _assess(server.base_url, "short", tmp_path, "--max-tokens", "1")
    assert result["usage"]["truncated"] == result["n_items"] == 8
    assert "max_tokens" in result["settings"]["protocol"]["differs"]
