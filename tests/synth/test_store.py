"""The run store: calls survive, nothing secret is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError
from synth.store import Judgement, Result, RunStore

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


LEGACY = Path(__file__).parent / "data" / "legacy"


def v1_store(path: Path) -> Path:
    """A run store exactly as the code before issue 15 wrote it (schema 1): a full
    ``cat synth`` run of ``MIXED_ITEMS`` by good/bad, kept as an SQL dump."""
    db = sqlite3.connect(path)
    db.executescript((LEGACY / "mixed_store_v1.sql").read_text(encoding="utf-8"))
    db.close()
    return path


def test_a_schema_1_store_is_migrated_in_place(tmp_path: Path) -> None:
    path = v1_store(tmp_path / "old.db")
    with sqlite3.connect(path) as db:
        before = db.execute("SELECT COUNT(*) FROM results").fetchone()
        assert db.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("1",)
    with RunStore(path) as store:
        assert store.opened_schema == 1
        results = store.results()
        assert (len(results),) == before
        assert all(r.credit is None and r.points is None and r.reply_hash is None for r in results)
        assert store.totals()["calls"] == 72 and store.judgements("j", "1") == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("4",)
        columns = {row[1] for row in db.execute("PRAGMA table_info(results)")}
    assert {"credit", "points", "max_score", "reply_hash"} <= columns
    with RunStore(path) as again:  # a second opening finds schema 4: nothing to do
        assert again.opened_schema == 4 and len(again.results()) == before[0]


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    RunStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='9' WHERE name='schema'")
    with pytest.raises(SynthError, match="run store schema 9, expected 4"):
        RunStore(path)


def test_results_keep_their_scores_and_judgements_their_key(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.db") as store:
        result = Result("m1", "q1", "ok", None, 0.6, True, [], 0.6, 2, 4, "abc")
        store.put_result(result, "2")
        assert store.results() == [result]
        graded = Result("m1", "q1", "ok", None, 1.0, True, [], 1.0, 4, 4, "abc")
        store.regrade_result(graded)
        assert store.results() == [graded]
        failed = Judgement("q1", "m1", "abc", "j", "1", "failed", None, 4, "p", "k", 1, "bad")
        store.put_judgement(failed)
        assert store.get_judgement("q1", "m1", "abc", "j", "1") == failed
        ok = Judgement("q1", "m1", "abc", "j", "1", "ok", 3, 4, "p", "k2", 1, None)
        store.put_judgement(ok)  # replaces the failed one under the same key
        assert store.judgements("j", "1") == [ok]
        assert store.get_judgement("q1", "m1", "other", "j", "1") is None
        assert store.judgements("j", "2") == [] and store.judgements("other", "1") == []
