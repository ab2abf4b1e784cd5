"""Run store schemas 3 and 4: what each call was for, its grade, a reasoning model's
thinking and finish reason, reading every call back, and the migration of a store
written by the code before them (schema 2)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError
from synth.store import SCHEMA_VERSION, RunStore
from tests.synth.test_store import LEGACY

REQUEST = ChatRequest(
    "m1",
    (("system", "s"), ("user", "What is 2+2?")),
    0.3,
    7,
    64,
    stop=("\n\n",),
    extra_body={"reasoning_effort": "low"},
    item_id="q1",
    stage="generation",
)


def v2_store(path: Path) -> Path:
    """A run store exactly as the code before issue 28 wrote it (schema 2): a ``cat
    synth`` run of three choice and two open items by good/bad (singles and pairs) with
    a judge, kept as an SQL dump (33 calls, 20 results, 8 judgements)."""
    db = sqlite3.connect(path)
    db.executescript((LEGACY / "mixed_store_v2.sql").read_text(encoding="utf-8"))
    db.close()
    return path


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def test_a_call_keeps_its_item_stage_and_grade(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.db") as store:
        store.put_call(REQUEST, ChatReply("Answer: 4", 10, 3, 0.25, 2), 0.01, "2")
        other = ChatRequest("m2", REQUEST.messages, item_id="q1", stage="debate")
        store.put_call(other, ChatReply("no idea"), None, "2")
        (first, second) = list(store.iter_calls())
        assert (first.key, first.model, first.item_id, first.stage) == (
            REQUEST.key,
            "m1",
            "q1",
            "generation",
        )
        assert first.request == REQUEST.payload()  # stop and extra_body included
        assert first.reply == ChatReply("Answer: 4", 10, 3, 0.25, 2) and first.cost == 0.01
        assert first.answer is None and first.grade is None and first.prompt_version == "2"
        grade = {"status": "ok", "correct": True, "points": 1, "max_score": 1, "target": "4"}
        store.set_call_grade(REQUEST.key, "4", grade)
        store.set_call_grade("no-such-key", "A", grade)  # ignored
        (first, _) = list(store.iter_calls())
        assert first.answer == "4" and first.grade == grade
        assert [c.key for c in store.iter_calls(["m2"])] == [other.key] == [second.key]
        assert store.count_calls() == 2 and store.count_calls(["m2", "m3"]) == 1
        # the same request asked again for another reason stays the call first stored
        store.put_call(
            ChatRequest("m2", REQUEST.messages, item_id="q9", stage="x"), ChatReply("?"), None, "2"
        )
        assert [(c.item_id, c.stage, c.reply.text) for c in store.iter_calls(["m2"])] == [
            ("q1", "debate", "no idea")
        ]


def test_a_batch_request_comes_back_with_the_same_key_and_purpose(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.db") as store:
        store.put_batch_requests([(REQUEST, "generation")], 1)
        found = store.batch_request(REQUEST.key)
        assert found is not None
        request, role = found
        assert request == REQUEST and request.key == REQUEST.key and role == "generation"
        assert (request.item_id, request.stage) == ("q1", "generation")


def test_a_schema_2_store_is_migrated_in_place(tmp_path: Path) -> None:
    path = v2_store(tmp_path / "old.db")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("2",)
        keys = {row[0] for row in db.execute("SELECT key FROM calls")}
        replies = dict(db.execute("SELECT key, reply FROM calls").fetchall())
    with RunStore(path) as store:
        assert store.opened_schema == 2
        calls = list(store.iter_calls())
        assert len(calls) == 33 == len(keys) and len(store.results()) == 20
        assert {c.key: c.reply.text for c in calls} == replies
        assert all(c.item_id is c.stage is c.answer is c.grade is None for c in calls)
        # what the old store knows of each call: every one is named by a result's
        # stages or a judgement
        purposes = store.call_purposes()
        assert set(purposes) == keys
        # 8 judgements of 3 distinct judge prompts (equal replies make equal calls)
        assert sum(stage == "judge" for _, stage in purposes.values()) == 3
    fresh = tmp_path / "new.db"
    RunStore(fresh).close()
    with sqlite3.connect(path) as old, sqlite3.connect(fresh) as new:
        assert old.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == (
            str(SCHEMA_VERSION),
        )
        for table in ("calls", "batch_requests", "results", "judgements", "batches"):
            assert _columns(old, table) == _columns(new, table), table
    with RunStore(path) as again:  # a second opening finds schema 4: nothing to do
        assert again.opened_schema == 4 and again.count_calls() == 33
        # calls stored before schema 4 have no reasoning, no finish reason
        assert all(c.reply.reasoning is None and c.reply.finish_reason is None for c in calls)


def test_a_reasoning_reply_keeps_its_thinking_and_why_it_ended(tmp_path: Path) -> None:
    reply = ChatReply(
        "The answer is (B).",
        10,
        90,
        reasoning="A looks right... no, B.",
        finish_reason="length",
        reasoning_tokens=70,
    )
    with RunStore(tmp_path / "run.db") as store:
        store.put_call(REQUEST, reply, None, "2")
        stored = store.get_call(REQUEST.key)
        assert stored is not None and stored.reply == reply and stored.reply.truncated
        (record,) = list(store.iter_calls())
        assert record.reply == reply


def test_a_migration_cut_short_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = v2_store(tmp_path / "old.db")
    with sqlite3.connect(path) as db:  # the migration's last step will fail: a view
        db.execute("DROP TABLE batch_requests")
        db.execute("CREATE VIEW batch_requests AS SELECT key, model FROM calls")
    with pytest.raises(SynthError, match="cannot open the run store"):
        RunStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("2",)
        assert "grade" not in _columns(db, "calls")


def test_existing_refuses_what_is_not_a_run_store(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(SynthError, match=r"none\.db: no such run store"):
        RunStore.existing(missing)
    assert not missing.exists()  # not made by the attempt
    with pytest.raises(SynthError, match="not a file"):
        RunStore.existing(tmp_path)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(SynthError, match=r"other\.db: not a run store"):
        RunStore.existing(other)
    with sqlite3.connect(other) as db:  # left untouched
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["t"]
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SynthError, match=r"junk\.db: not a run store"):
        RunStore.existing(junk)
    RunStore(tmp_path / "run.db").close()
    with RunStore.existing(tmp_path / "run.db") as store:
        assert store.count_calls() == 0
