"""Open and graded items end to end through the local server: asking, grading, scored
export, and the LLM judge (stored judgements, reruns, refusals, agreement)."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from itempool import ItemType
from itempool.formats.responses import read_responses, read_scored_responses
from synth.agreement import agreement
from synth.errors import SynthError
from synth.job import SynthesisReport, run_synthesis
from synth.judge import judge_messages
from synth.local_server import LocalServer
from synth.local_server.simulator import Simulator
from synth.runner import RunProgress
from synth.store import RunStore
from tests.synth.pools import EN_ITEMS, OPEN_ITEMS, ZH_OPEN_ITEMS, write_pool

MODELS = {"perfect": 1.0, "hopeless": 0.0}
JUDGES = {
    "fair": "fair",
    "harsh": "harsh",
    "noisy": "noisy",
    "wild": "out-of-range",
    "mute": "mute",
}
OPEN_IDS = {item.id for item in OPEN_ITEMS if item.type is ItemType.OPEN}
N_CATEGORIES = {item.id: item.max_score + 1 for item in OPEN_ITEMS}


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    return write_pool(tmp_path / "open-pool", OPEN_ITEMS)


def _synth(pool: Path, server: LocalServer, tmp: Path, **options: object) -> SynthesisReport:
    options = {"store": tmp / "run.db", "out": tmp / "r.jsonl", **options}
    return run_synthesis(pool, "perfect,hopeless", base_url=server.base_url, **options)  # type: ignore[arg-type]


def _judge_calls(server: LocalServer, judge: str) -> int:
    return sum(r.model == judge and r.outcome == "ok" for r in server.records)


def test_open_items_are_asked_graded_and_exported_as_scores(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS) as server:
        report = _synth(pool, server, tmp_path)
    assert report.scores == "points" and report.max_score == 4 and report.n_open_items == 4
    matrix = read_scored_responses(tmp_path / "r.jsonl", n_categories=N_CATEGORIES)
    assert matrix.item_ids == tuple(item.id for item in OPEN_ITEMS)
    assert matrix.n_categories == tuple(item.max_score + 1 for item in OPEN_ITEMS)
    perfect = matrix.values[matrix.subject_ids.index("perfect")]
    assert perfect.tolist() == [item.max_score for item in OPEN_ITEMS]
    rows = {row.name: row for row in report.participants}
    assert rows["perfect"].mean_share == 1.0 and rows["perfect"].accuracy == 1.0
    assert rows["hopeless"].mean_share is not None and rows["hopeless"].mean_share < 0.5
    with RunStore(tmp_path / "run.db") as store:
        results = {(r.participant, r.item_id): r for r in store.results()}
    for r in results.values():  # the matrix holds the stored points
        assert (
            r.points
            == matrix.values[matrix.subject_ids.index(r.participant)][
                matrix.item_ids.index(r.item_id)
            ]
        )
        assert r.credit is not None and 0 <= r.credit <= 1 and r.reply_hash
    choices = [json.loads(line) for line in (tmp_path / "r.choices.jsonl").read_text().splitlines()]
    assert all(not OPEN_IDS & set(line["choices"]) for line in choices)  # letters only


def test_open_prompts_ask_for_free_text_and_pairs_see_the_partners_text(
    pool: Path, tmp_path: Path
) -> None:
    with LocalServer(OPEN_ITEMS, MODELS) as server:
        _synth(pool, server, tmp_path, participants=["pairs"])
    with sqlite3.connect(tmp_path / "run.db") as db:
        calls = [(json.loads(q), a) for q, a in db.execute("SELECT request, reply FROM calls")]
    dose = [(q, a) for q, a in calls if "70 kg" in q["messages"][1]["content"]]
    prompts = [q["messages"][1]["content"] for q, _ in dose]
    assert all("Answer in your own words." in p for p in prompts)
    assert all(p.rstrip().endswith("'Final answer: <number>'.") for p in prompts)
    assert all("Options:" not in p for p in prompts)
    first = next(a for q, a in dose if q["model"] == "hopeless" and "Another" not in str(q))
    debate = next(p for p in prompts if "--- their answer ---" in p and first in p)
    assert debate  # the second model reviews the first one's free text


def test_binary_writes_the_0_1_reading(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS) as server:
        report = _synth(pool, server, tmp_path, binary=True)
    assert report.scores == "binary"
    matrix = read_responses(tmp_path / "r.jsonl")
    with RunStore(tmp_path / "run.db") as store:
        correct = {(r.participant, r.item_id): int(r.correct) for r in store.results()}
    for s, subject in enumerate(matrix.subject_ids):
        for j, item in enumerate(matrix.item_ids):
            assert matrix.values[s, j] == correct[(subject, item)]


def test_a_chinese_open_pool(tmp_path: Path) -> None:
    pool = write_pool(tmp_path / "zh-open", ZH_OPEN_ITEMS, "zh")
    with LocalServer(ZH_OPEN_ITEMS, MODELS) as server:
        report = _synth(pool, server, tmp_path, participants=["singles"])
    rows = {row.name: row for row in report.participants}
    assert rows["perfect"].mean_share == 1.0 and rows["hopeless"].mean_share == 0.0
    with sqlite3.connect(tmp_path / "run.db") as db:
        asked = [
            json.loads(q)["messages"][1]["content"]
            for (q,) in db.execute("SELECT request FROM calls")
        ]
    assert any("回答最后一行写“最终答案：<数值>”。" in p for p in asked)
    assert all("请用文字作答。" in p for p in asked)


def test_the_judge_is_stored_and_never_asked_twice(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        first = _synth(pool, server, tmp_path, judge_model="fair", open_grading="judge")
        calls = _judge_calls(server, "fair")
        again = _synth(pool, server, tmp_path, judge_model="fair", open_grading="judge")
        assert _judge_calls(server, "fair") == calls  # the rerun asks the judge nothing
    judge = first.judge
    assert judge is not None and judge.model == "fair" and judge.prompt_version
    assert judge.open_answers == 4 * 4 == judge.judged == judge.new
    assert 0 < calls <= judge.new  # identical replies share one judge call
    assert again.judge is not None and again.judge.new == 0 and again.judge.from_store == 16
    assert again.new_calls == 0 and again.all_from_store
    # the fair judge gives the metric's points: full agreement, and the same matrix
    agree = judge.agreement
    assert (agree.n, agree.exact, agree.quadratic_kappa) == (16, 1.0, pytest.approx(1.0))
    assert first.open_grading == "judge"
    with sqlite3.connect(tmp_path / "run.db") as db:
        (meta,) = db.execute("SELECT value FROM meta WHERE name='run'").fetchone()
        n_rows = db.execute("SELECT COUNT(*) FROM judgements WHERE status='ok'").fetchone()
    run = json.loads(meta)
    assert run["judge_model"] == "fair" and run["judge_prompt_version"] == judge.prompt_version
    assert run["open_grading"] == "judge" and n_rows == (16,)


def test_agreement_on_a_known_case_and_judge_points_in_the_matrix(
    pool: Path, tmp_path: Path
) -> None:
    # The harsh judge gives one point less than the metric (0 stays 0).
    with LocalServer(OPEN_ITEMS, {"perfect": 1.0, "mid": 0.5}, judges=JUDGES) as server:
        report = run_synthesis(
            pool,
            "perfect,mid",
            base_url=server.base_url,
            store=tmp_path / "run.db",
            out=tmp_path / "r.jsonl",
            judge_model="harsh",
            open_grading="judge",
        )
    with RunStore(tmp_path / "run.db") as store:
        results = [r for r in store.results() if r.item_id in OPEN_IDS]
    tops = {item.id: item.max_score for item in OPEN_ITEMS}
    metric = [r.points or 0 for r in results]
    judged = [max(p - 1, 0) for p in metric]
    expected = agreement(judged, metric, [tops[r.item_id] for r in results])
    assert report.judge is not None
    found = report.judge.agreement
    assert found.n == len(results) == 16
    assert found.exact == pytest.approx(sum(p == 0 for p in metric) / 16)
    assert found.quadratic_kappa == pytest.approx(expected.kappa)
    assert found.spearman == pytest.approx(expected.spearman)
    matrix = read_scored_responses(tmp_path / "r.jsonl", n_categories=N_CATEGORIES)
    for r, points in zip(results, judged, strict=True):
        row = matrix.subject_ids.index(r.participant)
        assert matrix.values[row, matrix.item_ids.index(r.item_id)] == points


def test_an_out_of_range_judge_is_refused_recorded_and_asked_again(
    pool: Path, tmp_path: Path
) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        first = _synth(pool, server, tmp_path, judge_model="wild", open_grading="judge")
        calls = _judge_calls(server, "wild")
        again = _synth(pool, server, tmp_path, judge_model="wild", open_grading="judge")
        retried = _judge_calls(server, "wild") - calls
    assert first.judge is not None and again.judge is not None
    assert first.judge.judged == 0 and first.judge.failed == first.judge.refused == 16
    assert again.judge.failed == 16 and retried == calls  # asked again, with a new seed
    assert any("left out of the matrix" in note for note in first.notes)
    matrix = read_scored_responses(tmp_path / "r.jsonl")
    assert matrix.item_ids == ("op-multi", "op-order", "op-single")  # no open item judged
    with sqlite3.connect(tmp_path / "run.db") as db:
        rows = db.execute("SELECT status, rejected, error FROM judgements").fetchall()
    assert {(s, n) for s, n, _ in rows} == {("failed", 2)}
    assert all("outside 0..4" in e or "outside 0..2" in e for _, _, e in rows)


def test_a_mute_judge_fails_but_metric_points_stay(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        report = _synth(pool, server, tmp_path, judge_model="mute")
    assert report.judge is not None and report.judge.refused == 16
    assert report.open_grading == "metric" and report.notes == []
    matrix = read_scored_responses(tmp_path / "r.jsonl", n_categories=N_CATEGORIES)
    assert set(matrix.item_ids) >= OPEN_IDS and matrix.observed.all()
    with sqlite3.connect(tmp_path / "run.db") as db:
        errors = {e for (e,) in db.execute("SELECT error FROM judgements")}
    assert errors == {"no 'Score: k' line"}


def test_an_edited_item_is_judged_again(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        _synth(pool, server, tmp_path, judge_model="fair")
        edited = [
            item.model_copy(update={"rubric": "Oral glucose is enough."})
            if item.id == "op-hypo"
            else item
            for item in OPEN_ITEMS
        ]
        write_pool(pool, edited)
        again = _synth(pool, server, tmp_path, judge_model="fair")
    assert again.judge is not None and again.judge.new == 4 and again.judge.from_store == 12


def test_a_judge_without_open_items_is_a_note(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, {"perfect": 1.0}, judges=JUDGES) as server:
        report = run_synthesis(
            en_pool,
            "perfect",
            base_url=server.base_url,
            store=tmp_path / "run.db",
            out=tmp_path / "r.jsonl",
            limit=3,
            judge_model="fair",
            open_grading="judge",
        )
        assert _judge_calls(server, "fair") == 0
    assert report.judge is None and report.open_grading == "metric"
    assert report.notes == [
        "judge fair asked nothing: none of the 3 items asked is open (points come from the "
        "reference grading)"
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"open_grading": "judge"}, "needs a judge model"),
        ({"open_grading": "vibes"}, "open grading is one of metric, judge"),
        ({"judge_model": "a,b"}, "give one judge model"),
        ({"judge_model": "j@http://127.0.0.1:{port}/v1"}, "cannot reach"),
        ({"report": "/nowhere/report.json"}, "folder /nowhere does not exist"),
    ],
)
def test_bad_judge_settings_fail_before_any_call(
    pool: Path, tmp_path: Path, options: dict[str, str], message: str
) -> None:
    options = {k: v.format(port=_free_port()) for k, v in options.items()}
    with LocalServer(OPEN_ITEMS, MODELS) as server, pytest.raises(SynthError, match=message):
        _synth(pool, server, tmp_path, **options)
    assert not (tmp_path / "run.db").exists()


def test_an_open_item_that_cannot_be_graded_fails_before_any_call(tmp_path: Path) -> None:
    broken = [OPEN_ITEMS[2].model_copy(update={"references": ("—",)})]
    pool = write_pool(tmp_path / "broken", broken)
    with pytest.raises(SynthError, match="item op-hypo: reference 0 is empty"):
        run_synthesis(
            pool,
            "m",
            base_url="http://127.0.0.1:9/v1",
            store=tmp_path / "s.db",
            out=tmp_path / "r.jsonl",
        )
    assert not (tmp_path / "s.db").exists()


def test_scripted_models_and_judges_answer_open_items() -> None:
    sim = Simulator(OPEN_ITEMS, {"perfect": 1.0, "hopeless": 0.0}, 0, judges=JUDGES)
    by_id = {item.id: item for item in OPEN_ITEMS}
    hypo = sim.find_item([{"role": "user", "content": OPEN_ITEMS[2].question}])
    assert hypo is not None
    assert sim.answer_text("perfect", hypo, "k") == by_id["op-hypo"].references[0]
    dose = sim.find_item([{"role": "user", "content": OPEN_ITEMS[0].question}])
    assert dose is not None
    assert sim.answer_text("perfect", dose, "k").endswith("Final answer: 350")
    assert not sim.answer_text("hopeless", dose, "k").endswith("Final answer: 350")
    prompt = judge_messages(by_id["op-hypo"], "en", by_id["op-hypo"].references[0])[1][1]
    assert sim.answer_text("fair", hypo, "k", prompt).endswith("Score: 4")
    assert sim.answer_text("harsh", hypo, "k", prompt).endswith("Score: 3")
    assert sim.answer_text("wild", hypo, "k", prompt).endswith("Score: 5")
    assert "Score" not in sim.answer_text("mute", hypo, "k", prompt)
    noisy = Counter(sim.answer_text("noisy", hypo, f"k{i}", prompt)[-1] for i in range(60))
    assert set(noisy) == {"3", "4"}  # 4 - 1, 4 or 4 + 1 capped at 4
    assert sim.names == ["perfect", "hopeless", *JUDGES]
    with pytest.raises(SynthError, match="mode must be one of"):
        Simulator(OPEN_ITEMS, {"m": 1.0}, 0, judges={"j": "kind"})
    with pytest.raises(SynthError, match="name of its own"):
        Simulator(OPEN_ITEMS, {"m": 1.0}, 0, judges={"m": "fair"})


def test_a_judge_call_that_fails_is_recorded_and_asked_again(pool: Path, tmp_path: Path) -> None:
    seen: list[RunProgress] = []
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        first = _synth(pool, server, tmp_path, judge_model="nosuch", progress=seen.append)
        asked = [r.key for r in server.records if r.model == "nosuch"]  # each one a 404
        again = _synth(pool, server, tmp_path, judge_model="nosuch")
        asked_again = [r.key for r in server.records if r.model == "nosuch"][len(asked) :]
    assert first.judge is not None and first.judge.failed == 16 and first.judge.refused == 0
    assert first.failed_calls == len(asked) > 0  # a 404 is final: one request per call
    # every judgement is asked again (identical ones share a call while it is in flight)
    assert again.judge is not None and again.judge.failed == 16
    assert set(asked_again) == set(asked)
    assert seen[-1].done == seen[-1].total  # the judge's calls are in the progress total
    with sqlite3.connect(tmp_path / "run.db") as db:
        rows = db.execute("SELECT DISTINCT status, rejected, error FROM judgements").fetchall()
    assert rows == [("failed", 0, "the judge's call failed (see the store's failures)")]


def test_the_local_server_command_line_takes_judges() -> None:
    from synth.local_server.server import _parser

    args = _parser().parse_args(["--pool", "p", "--models", "m=1", "--judges", "j=fair,k=mute"])
    assert args.judges == {"j": "fair", "k": "mute"}
    with pytest.raises(SystemExit):
        _parser().parse_args(["--pool", "p", "--models", "m=1", "--judges", "j=kind"])
