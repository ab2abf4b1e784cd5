"""Grades stored at write time, and every stored call exported once with its prompt and
raw reply (``synth.export_calls``), from a ``cat synth`` run against the local server."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from itempool import ItemType, QuestionSet, read_questions
from synth.errors import SynthError
from synth.export_calls import export_calls
from synth.job import run_synthesis
from synth.local_server import LocalServer
from synth.question_match import QuestionIndex
from synth.store import RunStore
from tests.synth.pools import MIXED_ITEMS, OPEN_ITEMS, write_pool
from tests.synth.test_store_calls import v2_store

#: The items of the schema 2 store kept in tests/synth/data/legacy (and its models).
ITEMS = MIXED_ITEMS[:3] + OPEN_ITEMS[:2]
MODELS = {"good": 0.9, "bad": 0.3}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, QuestionSet]:
    """A fresh run (singles and pairs of good and bad, a judge of the open answers) as
    the legacy schema 2 store's, by today's code: a run store of schema 3."""
    tmp = tmp_path_factory.mktemp("export")
    pool = write_pool(tmp / "mixed", ITEMS)
    with LocalServer(ITEMS, MODELS, judges={"judge": "fair"}) as server:
        run_synthesis(
            pool,
            "good,bad",
            store=tmp / "run.db",
            out=tmp / "responses.jsonl",
            base_url=server.base_url,
            judge_model="judge",
        )
    return tmp / "run.db", read_questions(pool)


def _stored(path: Path) -> dict[str, tuple[str, str, str | None, str | None, str | None]]:
    """key -> (request, reply, item id, stage, grade) as the store's table holds them."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT key, request, reply, item_id, stage, grade FROM calls")
        return {r[0]: r[1:] for r in rows}


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_every_call_is_stored_with_its_item_stage_and_grade(
    run: tuple[Path, QuestionSet],
) -> None:
    path, pool = run
    items = {item.id: item for item in pool.items}
    stored = _stored(path)
    # 5 items x (2 singles' generations + 2 pairs x debate, reflection) + 3 judge prompts
    assert len(stored) == 33
    stages = {stage for _, _, _, stage, _ in stored.values()}
    assert stages == {"generation", "debate", "reflection", "judge"}
    with RunStore(path) as store:
        for call in store.iter_calls():
            assert call.item_id in items and call.grade is not None, call.key
            item = items[call.item_id]
            if call.stage == "judge":
                assert item.type is ItemType.OPEN and call.grade["status"] == "ok"
                assert 0 <= call.grade["points"] <= item.max_score
                assert call.answer == str(call.grade["points"])
                continue
            assert call.grade["max_score"] == item.max_score
            assert 0 <= call.grade["points"] <= item.max_score
            if item.type is not ItemType.OPEN:
                assert call.grade["target"] == item.answer
                assert call.grade["correct"] == (call.answer == item.answer)


def test_the_export_holds_every_call_once_with_its_prompt_and_reply(
    run: tuple[Path, QuestionSet],
) -> None:
    path, _ = run
    stored = _stored(path)
    out = io.StringIO()
    counts = export_calls(path, stream=out)
    lines = _lines(out.getvalue())
    assert counts.calls == len(lines) == len(stored) and counts.ungraded == 0
    assert sorted(line["key"] for line in lines) == sorted(stored)  # each key once
    for line in lines:
        request, reply, item_id, stage, grade = stored[line["key"]]
        payload = json.loads(request)
        assert line["prompt"] == payload["messages"]
        assert line["reply"] == reply == line["resps"][0][0]
        assert (line["item_id"], line["stage"], line["grade"]) == (
            item_id,
            stage,
            json.loads(grade or "null"),
        )
        assert line["filtered_resps"] == [line["answer"]]
        # lm-eval's hashes: of the prompt string, of the target's str
        context = line["arguments"]["gen_args_0"]["arg_0"]
        assert json.loads(context) == payload["messages"]
        assert line["prompt_hash"] == hashlib.sha256(context.encode()).hexdigest()
        assert line["settings"] == {
            "temperature": 0.0,
            "max_tokens": None,
            "seed": 0,
            "stop": None,
            "extra_body": None,
        }
        if stage != "judge":
            assert line["exact_match"] == float(line["grade"]["correct"])
    good = _lines(_export_text(path, models=["good"]))
    assert good and {line["model"] for line in good} == {"good"}
    assert len(good) == sum(json.loads(r[0])["model"] == "good" for r in stored.values())


def _export_text(path: Path, **kwargs: Any) -> str:
    out = io.StringIO()
    export_calls(path, stream=out, **kwargs)
    return out.getvalue()


def test_the_pool_fills_doc_and_target(run: tuple[Path, QuestionSet], tmp_path: Path) -> None:
    path, pool = run
    seen: list[tuple[int, int]] = []
    counts = export_calls(
        path, tmp_path / "calls.jsonl", pool=pool, progress=lambda d, t: seen.append((d, t))
    )
    lines = _lines((tmp_path / "calls.jsonl").read_text(encoding="utf-8"))
    assert counts.graded_here == 0 and seen[-1] == (33, 33)  # all graded when stored
    position = {item.id: k for k, item in enumerate(pool.items)}
    for line in lines:
        item = pool.items[line["doc_id"]]
        assert position[line["item_id"]] == line["doc_id"]
        assert line["doc"]["question"] == item.question
        assert line["target_hash"] == hashlib.sha256(line["target"].encode()).hexdigest()
        doc = json.dumps(line["doc"], indent=2, ensure_ascii=False)
        assert line["doc_hash"] == hashlib.sha256(doc.encode()).hexdigest()


def test_an_old_store_is_graded_by_the_pool_as_the_run_grades(
    run: tuple[Path, QuestionSet], tmp_path: Path
) -> None:
    """The schema 2 store holds the same calls (same keys, same replies) without their
    item, stage or grade: the export finds and grades each as today's run did."""
    path, pool = run
    fresh = {line["key"]: line for line in _lines(_export_text(path))}
    old = v2_store(tmp_path / "old.db")
    bare = _lines(_export_text(old))
    assert {line["key"] for line in bare} == set(fresh)
    # without the pool: item and stage from the results and judgements, no grade
    assert all(line["grade"] is None and line["doc"] == {"id": line["item_id"]} for line in bare)
    assert all(
        (b["item_id"], b["stage"]) == (fresh[b["key"]]["item_id"], fresh[b["key"]]["stage"])
        for b in bare
    )
    out = io.StringIO()
    counts = export_calls(old, stream=out, pool=pool)
    assert counts.graded_here == 33 and counts.found_by_question == 0
    for line in _lines(out.getvalue()):
        assert (line["answer"], line["grade"]) == (
            fresh[line["key"]]["answer"],
            fresh[line["key"]]["grade"],
        )
    # nothing names the calls' items: found by the question in each prompt
    with sqlite3.connect(old) as db:
        db.execute("DELETE FROM results")
        db.execute("DELETE FROM judgements")
    out = io.StringIO()
    counts = export_calls(old, stream=out, pool=pool)
    assert counts.found_by_question == 33 and counts.ungraded == 0
    for line in _lines(out.getvalue()):
        want = fresh[line["key"]]
        assert (line["item_id"], line["grade"]) == (want["item_id"], want["grade"])


def test_the_question_index_takes_the_question_asked_last() -> None:
    index = QuestionIndex(ITEMS)
    rewrapped = ITEMS[3].question.replace(" ", "\n ", 3)
    few_shot = [
        {"role": "system", "content": "Answer well."},
        {"role": "user", "content": f"Example:\n{ITEMS[0].question}\nAnswer: C"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": f"Now:\n  {rewrapped}"},
    ]
    assert index.find(few_shot) is ITEMS[3]  # re-wrapped, and after an example
    assert index.find(few_shot[:2]) is ITEMS[0]
    assert index.find([{"role": "user", "content": "What is 2+2?"}]) is None


def test_what_is_not_a_run_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    with pytest.raises(SynthError, match="no such run store"):
        export_calls(tmp_path / "none.db", stream=io.StringIO())
    assert not (tmp_path / "none.db").exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(SynthError, match="not a run store"):
        export_calls(other, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_calls_answered_by_batch_files_are_stored_with_their_grades(
    en_pool: Path, tmp_path: Path
) -> None:
    from tests.synth.test_batch_round import _rounds

    _rounds(en_pool, tmp_path)
    with RunStore(tmp_path / "batch.db") as store:
        calls = list(store.iter_calls())
    assert len(calls) == 48  # 8 items: 16 generations, 16 debates, 16 reflections
    assert {c.stage for c in calls} == {"generation", "debate", "reflection"}
    assert all(c.item_id is not None and c.grade is not None for c in calls)
    assert all(c.grade["target"] == "B" for c in calls if c.grade is not None)  # EN_ITEMS' key
    with sqlite3.connect(tmp_path / "batch.db") as db:  # each batch request named its item
        assert db.execute("SELECT COUNT(*), COUNT(item_id) FROM batch_requests").fetchone() == (
            48,
            48,
        )
