"""Score a reply to any item on the item's own scale: credit in [0, 1], points 0..max_score.

Pure functions, no I/O (issue 15). Per item type:

- single: credit 1 or 0.
- multi: credit is the set-overlap F1 between the chosen letters and the key,
  2·|chosen ∩ key| / (|chosen| + |key|) (1 exactly when they are equal).
- order: credit is (Kendall τ + 1) / 2 against the key.
- open: credit is ``synth.open_grading.grade_open``'s score against the item's references
  and/or numeric answer (ROUGE-L, or the numeric verdict).
- an unparsed reply: credit 0.

``points`` = round-half-up(credit × max_score), except for a multi or order item with
``max_score`` 1: there 1 is the right/wrong threshold of the 0/1 answers (multi: the
letters equal the key; order: τ ≥ ``order_threshold``), so a 0/1 pool scores exactly as
before partial credit existed. ``correct`` is that threshold for choice items and
credit ≥ 0.5 for open ones (their 0/1 reading, ``cat synth --binary``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from itempool import ItemType, PoolItem
from itempool.languages import text_language
from synth.errors import SynthError
from synth.extractors import BUILTIN, check_extractor, extract_with
from synth.grading import GradeStatus, grade
from synth.open_grading import grade_open

#: An open item's answer counts as right (its 0/1 reading) from this credit on.
OPEN_PASS = 0.5


@dataclass(frozen=True)
class ItemScore:
    """A reply scored on its item's scale.

    ``answer``: the chosen letters of a choice item (normalised as ``synth.grading``
    does), None for an open item or an unparsed reply. ``score``: the raw grade (1/0
    single and multi, Kendall τ for order, the open grade's score). ``number``: the value
    read from an open reply when the item has a numeric answer."""

    status: GradeStatus
    answer: str | None
    score: float
    correct: bool
    credit: float
    points: int
    max_score: int
    number: float | None = None


def round_half_up(value: float) -> int:
    """``value`` rounded to a whole number, halves up (2.5 → 3, not Python's 2); a hair
    of slack keeps products such as 0.625 × 4 on their half after binary rounding."""
    return math.floor(value + 0.5 + 1e-9)


def points_for(credit: float, max_score: int) -> int:
    """round-half-up(credit × max_score), within 0..max_score."""
    if not 0.0 <= credit <= 1.0:
        raise SynthError(f"credit must lie in [0, 1], got {credit}")
    return min(max(round_half_up(credit * max_score), 0), max_score)


def set_f1(chosen: str, key: str) -> float:
    """Set-overlap F1 between chosen letters and the key's letters (0 when either is empty)."""
    picked, right = set(chosen), set(key)
    if not picked or not right:
        return 0.0
    return 2.0 * len(picked & right) / (len(picked) + len(right))


def score_reply(
    reply: str,
    item: PoolItem,
    order_threshold: float = 0.8,
    *,
    language: str | None = None,
    extractor: str = BUILTIN,
) -> ItemScore:
    """Score ``reply`` to ``item`` (module docstring). ``language`` (the pool's code:
    ``itempool.languages.text_language``) decides how an open reply is tokenised, None
    to detect it; ``order_threshold`` is the Kendall τ
    an order answer needs to be right; ``extractor`` names the rule that reads a
    choice item's letters (``synth.extractors``: a pool's protocol says which). Raises
    ``SynthError`` on bad settings or an open item whose references cannot be graded."""
    if item.type is ItemType.OPEN:
        return _score_open(reply, item, language)
    if extractor != BUILTIN:
        return _score_letter(reply, item, check_extractor(extractor, item.type))
    verdict = grade(reply, item, order_threshold)
    if verdict.status is GradeStatus.UNPARSED or verdict.answer is None:
        return ItemScore(verdict.status, None, 0.0, False, 0.0, 0, item.max_score)
    if item.type is ItemType.MULTI:
        credit = set_f1(verdict.answer, item.answer)
    elif item.type is ItemType.ORDER:
        credit = min(max((verdict.score + 1.0) / 2.0, 0.0), 1.0)
    else:
        credit = 1.0 if verdict.correct else 0.0
    # With max_score 1 the 0/1 threshold decides, as before partial credit existed.
    one = item.max_score == 1
    points = int(verdict.correct) if one else points_for(credit, item.max_score)
    return ItemScore(
        verdict.status,
        verdict.answer,
        verdict.score,
        verdict.correct,
        credit,
        points,
        item.max_score,
    )


def _score_letter(reply: str, item: PoolItem, extractor: str) -> ItemScore:
    """A single-choice reply read by a named extractor: right when the letter is the
    key's (a letter the item has no option for is an answer, and wrong)."""
    letter = extract_with(extractor, reply, item.type, item.options)
    if letter is None:
        return ItemScore(GradeStatus.UNPARSED, None, 0.0, False, 0.0, 0, item.max_score)
    right = letter == item.answer
    credit = 1.0 if right else 0.0
    points = points_for(credit, item.max_score)
    return ItemScore(GradeStatus.OK, letter, credit, right, credit, points, item.max_score)


def _score_open(reply: str, item: PoolItem, language: str | None) -> ItemScore:
    key = item.numeric_answer
    graded = grade_open(
        reply,
        item.references,
        numeric_key=None if key is None else key.value,
        abs_tol=None if key is None else key.abs_tol,
        rel_tol=None if key is None else key.rel_tol,
        language=None if language is None else text_language(language),
    )
    credit = min(max(graded.score, 0.0), 1.0)
    if graded.status is GradeStatus.UNPARSED:
        credit = 0.0
    return ItemScore(
        graded.status,
        None,
        graded.score,
        credit >= OPEN_PASS,
        credit,
        points_for(credit, item.max_score),
        item.max_score,
        number=graded.number,
    )


def check_open_item(item: PoolItem, language: str | None = None) -> None:
    """Raise ``SynthError`` naming ``item`` if its references or numeric answer cannot
    be graded (a reference with no word left after normalisation, such as "—"): found
    before any paid call rather than halfway through a run."""
    if item.type is not ItemType.OPEN:
        return
    try:
        _score_open("0", item, language)
    except SynthError as exc:
        raise SynthError(f"item {item.id}: {exc}") from exc
