"""The run store: calls survive, nothing secret is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError
from synth.store import Result, RunStore

REQUEST = ChatRequest("m1", (("system", "s"), ("user", "What is 2+2?")), 0.0, 7)


def test_a_call_is_on_disk_when_put_returns(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    store = RunStore(path)
    store.put_call(REQUEST, ChatReply("Answer: B", 10, 3, 0.2, 2), 0.5, "1")
    # another connection (another process after a crash) sees it without a close
    other = sqlite3.connect(path)
    assert other.execute("SELECT COUNT(*) FROM calls").fetchone() == (1,)
    other.close()
    stored = store.get_call(REQUEST.key)
    assert stored is not None and stored.reply == ChatReply("Answer: B", 10, 3, 0.2, 2)
    assert stored.cost == 0.5
    store.close()
    with RunStore(path) as again:
        assert again.get_call(REQUEST.key) is not None
        assert again.totals()["calls"] == 1


def test_key_covers_model_messages_and_parameters() -> None:
    same = ChatRequest("m1", (("system", "s"), ("user", "What is 2+2?")), 0.0, 7)
    assert same.key == REQUEST.key
    for other in (
        ChatRequest("m2", REQUEST.messages, 0.0, 7),
        ChatRequest("m1", (("user", "What is 2+2?"),), 0.0, 7),
        ChatRequest("m1", REQUEST.messages, 0.5, 7),
        ChatRequest("m1", REQUEST.messages, 0.0, 8),
    ):
        assert other.key != REQUEST.key


def test_failures_are_recorded_and_cleared_by_success(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.db") as store:
        store.put_failure(REQUEST, "gave up after 6 attempts")
        assert store.totals()["failed_calls"] == 1
        store.put_call(REQUEST, ChatReply("B"), None, "1")
        assert store.totals()["failed_calls"] == 0


def test_results_round_trip_and_replace(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.db") as store:
        stages = [{"role": "generation", "model": "m1", "key": "k", "answer": "B"}]
        store.put_result(Result("m1", "q1", "failed", None, 0.0, False, []), "1")
        store.put_result(Result("m1", "q1", "ok", "B", 1.0, True, stages), "1")
        (only,) = store.results()
        assert only == Result("m1", "q1", "ok", "B", 1.0, True, stages)
        store.set_meta("run", {"seed": 3})
        assert store.get_meta("run") == {"seed": 3} and store.get_meta("none") is None


def test_not_a_store_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SynthError, match="cannot open the run store"):
        RunStore(path)
