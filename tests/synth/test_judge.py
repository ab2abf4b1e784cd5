"""The judge's prompt and reading its score."""

from __future__ import annotations

import pytest

from itempool import PoolItem
from synth.errors import SynthError
from synth.judge import JUDGE_PROMPT_VERSION, judge_messages, judged_reply, parse_judge_score
from tests.synth.pools import OPEN_ITEMS, ZH_OPEN_ITEMS

BY_ID = {item.id: item for item in OPEN_ITEMS}


def test_the_prompt_holds_question_references_rubric_number_and_reply() -> None:
    item = BY_ID["op-hypo"]
    system, user = judge_messages(item, "en", "  Oral glucose.  ")
    assert system[0] == "system" and user[0] == "user"
    text = user[1]
    assert item.question in text and item.references[0] in text
    assert "Rubric:\nFull marks need oral glucose and a recheck." in text
    assert "from 0 to 4" in text and "'Score: k'" in text
    assert judged_reply(text) == "Oral glucose."
    numeric = judge_messages(BY_ID["op-infusion"], "en", "125")[1][1]
    assert "Numeric answer: 125, accepted within 0.5." in numeric and "from 0 to 2" in numeric
    dose = judge_messages(BY_ID["op-dose"], "en", "350")[1][1]
    assert "accepted within 1% of it" in dose and "Reference" not in dose
    assert JUDGE_PROMPT_VERSION


def test_chinese_prompt_and_exact_numbers() -> None:
    text = judge_messages(ZH_OPEN_ITEMS[0], "zh", "最终答案：300")[1][1]
    assert "数值答案：300，完全相等时即算正确。" in text and "评分：k" in text
    assert judged_reply(text) == "最终答案：300"
    # Any other language is judged with the English prompt; a non-code is refused.
    item = ZH_OPEN_ITEMS[0]
    assert judge_messages(item, "fr", "x") == judge_messages(item, "en", "x")
    with pytest.raises(SynthError, match="not a language code"):
        judge_messages(ZH_OPEN_ITEMS[0], "French", "x")


def test_a_reply_quoting_the_end_marker_is_still_read_whole() -> None:
    reply = "first line\n--- end of answer ---\nsecond line"
    assert judged_reply(judge_messages(BY_ID["op-hypo"], "en", reply)[1][1]) == reply
    assert judged_reply("no markers here") is None


@pytest.mark.parametrize(
    ("text", "points"),
    [
        ("The answer is right.\nScore: 4", 4),
        ("**Score:** 3", 3),
        ("Score = 2/4", 2),
        ("Final score: 0", 0),
        ("score is 1.", 1),
        ("Score: 3.0", 3),
        ("I first thought Score: 1, but on reflection\nScore: 2", 2),
        ("评分：３", 3),
        ("综合来看，得分为2分", 2),
        ("Score: 3 out of 4", 3),
    ],
)
def test_scores_are_read_from_the_last_statement(text: str, points: int) -> None:
    assert parse_judge_score(text, 4).points == points


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Score: 5", "outside 0..4"),
        ("Score: -1", "outside 0..4"),
        ("Score: 2.5", "not a whole number"),
        ("Score: 3/5", "out of 5, not out of 4"),
        ("The answer is mostly right.", "no 'Score: k' line"),
        ("", "no 'Score: k' line"),
    ],
)
def test_bad_scores_are_refused_with_a_reason(text: str, problem: str) -> None:
    verdict = parse_judge_score(text, 4)
    assert verdict.points is None and verdict.problem is not None
    assert problem in verdict.problem


def test_the_numeric_only_rubric_basis() -> None:
    item = PoolItem(
        id="x",
        type="open",
        question="How many mg?",
        numeric_answer={"value": 5, "abs_tol": 1, "rel_tol": 0.1},
        rubric="Units matter.",
        max_score=3,
    )
    text = judge_messages(item, "en", "5 mg")[1][1]
    assert "within 1 or 10% of it" in text and "the numeric answer and the rubric" in text
