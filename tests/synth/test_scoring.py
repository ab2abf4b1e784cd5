"""Scores on the item's own scale: credit in [0, 1] and points 0..max_score per type."""

from __future__ import annotations

import pytest

from itempool import ItemType, PoolItem
from synth.errors import SynthError
from synth.grading import GradeStatus
from synth.scoring import check_open_item, points_for, round_half_up, score_reply, set_f1

OPTIONS = {"A": "gentamicin", "B": "paracetamol", "C": "metformin", "D": "vancomycin"}


def _multi(max_score: int) -> PoolItem:
    return PoolItem(
        id="m",
        type=ItemType.MULTI,
        question="Which need a dose change?",
        options=OPTIONS,
        answer="ACD",
        max_score=max_score,
    )


def _order(max_score: int) -> PoolItem:
    return PoolItem(
        id="o",
        type=ItemType.ORDER,
        question="Order them.",
        options=OPTIONS,
        answer="ABCD",
        max_score=max_score,
    )


def _open(max_score: int = 4, **fields: object) -> PoolItem:
    return PoolItem(id="q", type="open", question="What?", max_score=max_score, **fields)  # type: ignore[arg-type]


def test_round_half_up_rounds_halves_up_despite_binary_fractions() -> None:
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 2.4999, 0.0, 3.0)] == [1, 2, 3, 2, 0, 3]
    assert points_for(0.625, 4) == 3  # 2.5 -> 3 (Python's round would give 2)
    assert points_for(0.375, 4) == 2  # 1.5 -> 2
    assert points_for(1 / 6, 3) == 1  # 0.5 -> 1 although 1/6 * 3 is 0.49999...
    assert points_for(1.0, 7) == 7 and points_for(0.0, 7) == 0
    with pytest.raises(SynthError, match="credit"):
        points_for(1.2, 4)


def test_single_choice_is_one_or_zero() -> None:
    item = PoolItem(id="s", question="Capital?", options={"A": "x", "B": "y"}, answer="B")
    right, wrong = score_reply("Answer: B", item), score_reply("Answer: A", item)
    assert (right.credit, right.points, right.correct, right.max_score) == (1.0, 1, True, 1)
    assert (wrong.credit, wrong.points, wrong.correct) == (0.0, 0, False)


@pytest.mark.parametrize(
    ("reply", "f1"),
    [
        ("Answer: ACD", 1.0),
        ("Answer: AC", 0.8),  # 2*2/(2+3)
        ("Answer: ABCD", 6 / 7),  # 2*3/(4+3)
        ("Answer: A", 0.5),  # 2*1/(1+3)
        ("Answer: B", 0.0),
    ],
)
def test_multi_credit_is_the_set_f1(reply: str, f1: float) -> None:
    assert set_f1(reply.removeprefix("Answer: "), "ACD") == pytest.approx(f1)
    graded = score_reply(reply, _multi(3))
    assert graded.credit == pytest.approx(f1)
    assert graded.points == points_for(f1, 3)
    assert graded.correct is (f1 == 1.0)


def test_multi_points_by_max_score() -> None:
    # AC: F1 0.8 -> 0.8 x 3 = 2.4 -> 2; 0.8 x 5 = 4; with max_score 1 only ACD passes.
    assert score_reply("Answer: AC", _multi(3)).points == 2
    assert score_reply("Answer: AC", _multi(5)).points == 4
    assert score_reply("Answer: AC", _multi(1)).points == 0  # today's rule, not round(0.8)
    assert score_reply("Answer: ACD", _multi(1)).points == 1


@pytest.mark.parametrize(
    ("order", "tau"),
    [("ABCD", 1.0), ("ABDC", 2 / 3), ("BADC", 1 / 3), ("ADCB", 0.0), ("DCBA", -1.0)],
)
def test_order_credit_maps_tau_to_zero_one(order: str, tau: float) -> None:
    graded = score_reply(f"Answer: {order}", _order(4))
    assert graded.score == pytest.approx(tau)
    assert graded.credit == pytest.approx((tau + 1) / 2)
    assert graded.points == points_for((tau + 1) / 2, 4)


def test_order_with_max_score_one_keeps_the_threshold_rule() -> None:
    # tau 2/3: credit 0.83 would round to 1, but below the 0.8 threshold it is wrong.
    assert score_reply("Answer: ABDC", _order(1)).points == 0
    assert score_reply("Answer: ABDC", _order(1), order_threshold=0.5).points == 1
    assert score_reply("Answer: ABCD", _order(1)).points == 1
    # with max_score 3: tau 1/3 -> credit 2/3 -> 2 points; the threshold only sets correct
    graded = score_reply("Answer: BADC", _order(3))
    assert graded.points == 2 and not graded.correct


def test_unparsed_replies_score_zero() -> None:
    for item in (_multi(3), _order(3)):
        graded = score_reply("I cannot tell.", item)
        assert graded.status is GradeStatus.UNPARSED
        assert (graded.credit, graded.points, graded.answer) == (0.0, 0, None)
    empty = score_reply("  ", _open(references=("oral glucose",)))
    assert empty.status is GradeStatus.UNPARSED and empty.points == 0


def test_open_items_take_the_open_grade() -> None:
    item = _open(4, references=("give oral glucose and recheck the sugar",))
    full = score_reply("Give oral glucose and recheck the sugar.", item, language="en")
    assert (full.credit, full.points, full.correct, full.answer) == (1.0, 4, True, None)
    half = score_reply("give oral glucose", item, language="en")
    # ROUGE-L: precision 1, recall 3/7 -> F 0.6 -> 2.4 -> 2 points
    assert half.credit == pytest.approx(0.6) and half.points == 2 and half.correct
    off = score_reply("Call a surgeon.", item, language="en")
    assert off.points == 0 and not off.correct


def test_open_numeric_answers_follow_the_tolerance() -> None:
    item = _open(2, numeric_answer={"value": 350, "rel_tol": 0.01})
    right = score_reply("70 x 5 = 350\nFinal answer: 352", item)
    wrong = score_reply("Final answer: 360", item)
    assert (right.points, right.number, right.correct) == (2, 352.0, True)
    assert (wrong.points, wrong.number, wrong.correct) == (0, 360.0, False)
    exact = _open(1, numeric_answer={"value": 350})  # no tolerance: exactly 350
    assert score_reply("Final answer: 350.0", exact).points == 1
    assert score_reply("Final answer: 351", exact).points == 0
    zh = score_reply("按体重计算。\n最终答案：３５０", item, language="zh")
    assert zh.points == 2


def test_an_open_item_that_cannot_be_graded_is_refused_by_name() -> None:
    item = _open(references=("—",))
    with pytest.raises(SynthError, match="item q: reference 0 is empty"):
        check_open_item(item)
    check_open_item(_open(references=("fine",)))  # no error
