"""From results to the response matrix and the run summary; prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itempool.formats.responses import read_responses
from synth.backend import ChatReply
from synth.errors import SynthError
from synth.export import summarize_results, write_choices, write_responses
from synth.pricing import Prices
from synth.store import Result


def _stages(first_right: bool) -> list[dict[str, object]]:
    return [{"role": "generation", "correct": first_right}, {"role": "debate"}, {"role": "r"}]


RESULTS = [
    Result("a", "q2", "ok", "B", 1.0, True, []),
    Result("a", "q1", "unparsed", None, 0.0, False, []),
    Result("a", "q3", "failed", None, 0.0, False, []),
    Result("a>b", "q1", "ok", "A", 0.0, False, _stages(True)),
    Result("a>b", "q2", "ok", "B", 1.0, True, _stages(False)),
    Result("a>b", "q3", "ok", "B", 1.0, True, _stages(True)),
    Result("b", "q1", "failed", None, 0.0, False, []),
]


def test_matrix_keeps_pool_order_and_leaves_failures_missing(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    n = write_responses(RESULTS, ["a", "a>b", "b"], ["q1", "q2", "q3"], path)
    assert n == 2  # "b" has nothing graded
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {"subject_id": "a", "responses": {"q1": 0, "q2": 1}}
    matrix = read_responses(path)
    assert matrix.subject_ids == ("a", "a>b") and matrix.item_ids == ("q1", "q2", "q3")
    assert not matrix.observed[0, 2] and matrix.observed[1].all()


def test_choices_keep_parsed_answers_only(tmp_path: Path) -> None:
    from cat.pools.fit import read_choices

    path = tmp_path / "r.choices.jsonl"
    n = write_choices(RESULTS, ["a", "a>b", "b"], ["q1", "q2", "q3"], path)
    assert n == 2
    choices = read_choices(path)
    assert choices["a>b"] == {"q1": "A", "q2": "B", "q3": "B"}
    assert "q3" not in choices["a"] and "b" not in choices  # failed: no choice recorded


def test_summary_counts_and_reflection_flips() -> None:
    summary = summarize_results(RESULTS, ["a", "a>b", "b"])
    a = summary["participants"]["a"]
    assert (a["answered"], a["correct"], a["unparsed"], a["failed"]) == (2, 1, 1, 1)
    assert a["accuracy"] == 0.5 and summary["participants"]["b"]["accuracy"] is None
    assert summary["reflection"] == {"right_to_wrong": 1, "wrong_to_right": 1, "pairs_graded": 3}


def test_prices_per_million_tokens(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"m": {"input": 2.0, "output": 10.0}}))
    prices = Prices.read(path)
    assert prices.cost("m", ChatReply("x", 1000, 100)) == pytest.approx(0.003)
    assert prices.cost("other", ChatReply("x", 1000, 100)) is None
    path.write_text(json.dumps({"m": {"input": -1, "output": 1}}))
    with pytest.raises(SynthError, match=r"prices\.json"):
        Prices.read(path)
    path.write_text("[1]")
    with pytest.raises(SynthError, match="JSON object"):
        Prices.read(path)


def test_a_continuous_item_keeps_its_credit_uncut(tmp_path: Path) -> None:
    from itempool import PoolItem
    from synth.export import graded_answers, is_scored

    items = {
        "s1": PoolItem(id="s1", type="open", continuous=True, question="q", references=("r",)),
        "p1": PoolItem(id="p1", type="open", question="q", references=("r",)),
    }
    results = [
        Result("a", "s1", "ok", None, 0.0, True, [], credit=0.62, points=1, max_score=1),
        Result("a", "p1", "ok", None, 0.0, True, [], credit=0.62, points=2, max_score=4),
    ]
    # Even with a judge's points for every open answer, the continuous one keeps its credit.
    graded = graded_answers(results, items, judge_points={("a", "s1"): 1, ("a", "p1"): 3})
    assert is_scored(graded, list(items.values()))
    assert graded[("a", "s1")].value(True) == 0.62 and graded[("a", "s1")].share == 0.62
    assert graded[("a", "p1")].value(True) == 3 and graded[("a", "s1")].value(False) == 1
    path = tmp_path / "r.jsonl"
    values = {key: g.value(True) for key, g in graded.items()}
    write_responses(results, ["a"], ["p1", "s1"], path, values)
    assert json.loads(path.read_text()) == {"subject_id": "a", "responses": {"p1": 3, "s1": 0.62}}
