"""How one call's reply was read, as the run store keeps it beside the call
(``RunStore.set_call_grade``) and ``cat export`` writes it.

An answer's call gets its parsed answer and a grade of ``status`` (ok, unparsed),
``correct``, ``points`` of ``max_score``, ``credit`` in [0, 1] where the item gives
partial credit (an open item, or one that scores above 1), the number read from an open
reply where the item has a numeric answer, and ``target``: the item's key (the letters
of a choice item; an open item's first reference answer, else its numeric answer). A
judge's call gets the score it gave (``points`` of ``max_score``) or why its reply gave
none.
"""

from __future__ import annotations

from itempool import ItemType, PoolItem
from synth.scoring import ItemScore

__all__ = ["answer_grade", "item_target", "judge_grade", "parsed_answer"]


def item_target(item: PoolItem) -> str:
    """The item's key as one string: a choice item's letters ("B", "AC", "BDAC"), an
    open item's first reference answer, else its numeric answer's value."""
    if item.type is not ItemType.OPEN:
        return item.answer
    if item.references:
        return item.references[0]
    if item.numeric_answer is not None:
        return f"{item.numeric_answer.value:g}"
    return ""


def parsed_answer(verdict: ItemScore) -> str | None:
    """The answer read from a reply: a choice item's letters, the number read from an
    open reply; None when nothing was read (an open reply without a number is graded
    as text)."""
    if verdict.answer is not None:
        return verdict.answer
    return None if verdict.number is None else f"{verdict.number:g}"


def answer_grade(verdict: ItemScore, item: PoolItem) -> dict[str, object]:
    """The grade of an answer's reply to ``item`` (the module docstring)."""
    grade: dict[str, object] = {
        "status": verdict.status.value,
        "correct": verdict.correct,
        "points": verdict.points,
        "max_score": verdict.max_score,
    }
    if item.type is ItemType.OPEN or item.max_score > 1:
        grade["credit"] = verdict.credit
    if verdict.number is not None:
        grade["number"] = verdict.number
    grade["target"] = item_target(item)
    return grade


def judge_grade(points: int | None, max_score: int, problem: str | None) -> dict[str, object]:
    """The grade of a judge's reply: the ``points`` it gave of ``max_score``, or the
    ``problem`` that made its score unusable."""
    grade: dict[str, object] = {
        "status": "ok" if problem is None else "unparsed",
        "points": points,
        "max_score": max_score,
    }
    if problem is not None:
        grade["error"] = problem
    return grade
