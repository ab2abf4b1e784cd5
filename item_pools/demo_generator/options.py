"""From a scenario's ``Calc`` or ``Pick`` to lettered options and a key.

Single-choice options are the key, the results of the case's mistakes and, where those
coincide, scaled values, never two of them too close together; multiple-answer and
ordering options are drawn row by row. Option order is shuffled, so keyed letters are
balanced.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from decimal import Decimal

from .numbers_and_text import dec, other_neighbour, round_half_up, tr
from .records import Calc, Inputs, Pick, PoorDrawError, Row

LETTERS = "ABCDE"
# Two options closer than this are a judgement call once someone rounds an intermediate
# step differently, so they are never offered together (the one deliberate exception is
# the rounding slip on keys that need no intermediate rounding).
_MIN_REL_GAP = Decimal("0.04")
_MIN_STEPS = 3
_FILLERS = (0.5, 0.75, 0.8, 0.9, 1.1, 1.2, 1.25, 1.5, 2.0)


def single_options(
    calc: Calc, rng: random.Random, n_options: int
) -> tuple[dict[str, str], str, dict[str, str]]:
    """Options (letter -> text), the key's letter, and the mistake behind each distractor."""
    digits = calc.digits
    step = Decimal(0) if digits is None else Decimal(1).scaleb(-digits)

    def shown(value: float | Decimal) -> Decimal:
        return dec(value).normalize() if digits is None else round_half_up(value, digits)

    key = shown(calc.value)
    picked: list[tuple[str, Decimal]] = [("key", key)]

    def far(a: Decimal, b: Decimal) -> bool:
        return abs(a - b) >= max(_MIN_STEPS * step, _MIN_REL_GAP * max(abs(a), abs(b)))

    def offer(label: str, value: Decimal, beside_key: bool = False) -> None:
        if len(picked) >= n_options or value <= 0 or any(value == v for _, v in picked):
            return
        if digits is None and int(value.as_tuple().exponent) < -6:
            return  # a six-decimal option is an unreadable one
        if all(far(value, v) or (beside_key and label_ == "key") for label_, v in picked):
            picked.append((label, value))

    if calc.slip and digits is not None and rng.random() < 0.5:
        other = other_neighbour(calc.value, digits)
        if other is not None:
            offer("rounded_wrong_way", other, beside_key=True)
    for label, wrong in calc.mistakes:
        if math.isfinite(wrong):
            offer(label, shown(wrong))
    fillers = list(_FILLERS)
    rng.shuffle(fillers)
    for factor in fillers:
        offer("scaled", shown(calc.value * factor))
    if len(picked) < n_options:
        raise PoorDrawError
    rng.shuffle(picked)
    options = {LETTERS[k]: f"{format(v, 'f')} {calc.unit}" for k, (_, v) in enumerate(picked)}
    answer = next(LETTERS[k] for k, (label, _) in enumerate(picked) if label == "key")
    why = {LETTERS[k]: label for k, (label, _) in enumerate(picked) if label != "key"}
    return options, answer, why


def draw_multi(
    rng: random.Random,
    n: int,
    draw: Callable[[], tuple[str, Inputs, float]],
    verdict: Callable[[float], bool | None],
) -> tuple[Row, ...]:
    """``n`` distinct options, at least one right and one wrong; ``verdict`` returns None
    for a value too close to the line to ask about."""
    n_right = rng.randint(1, n - 1)
    right: list[Row] = []
    wrong: list[Row] = []
    texts: set[str] = set()
    for _ in range(500):
        text, inputs, value = draw()
        ok = verdict(value)
        if ok is None or text in texts:
            continue
        bucket, room = (right, n_right) if ok else (wrong, n - n_right)
        if len(bucket) < room:
            bucket.append((text, inputs, 1.0 if ok else 0.0))
            texts.add(text)
        if len(right) + len(wrong) == n:
            return (*right, *wrong)
    raise PoorDrawError


def draw_order(
    n: int, draw: Callable[[], tuple[str, Inputs, float]], far: Callable[[float, float], bool]
) -> tuple[Row, ...]:
    """``n`` distinct options whose values are pairwise clearly apart."""
    chosen: list[Row] = []
    for _ in range(500):
        text, inputs, value = draw()
        if value <= 0 or any(text == t or not far(value, v) for t, _, v in chosen):
            continue
        chosen.append((text, inputs, value))
        if len(chosen) == n:
            return tuple(chosen)
    raise PoorDrawError


def pick_options(
    pick: Pick, kind: str, rng: random.Random
) -> tuple[dict[str, str], str, dict[str, Inputs]]:
    """Options in a shuffled order, the key, and each option's inputs by letter."""
    order = list(range(len(pick.rows)))
    rng.shuffle(order)
    rows = [pick.rows[i] for i in order]
    options = {LETTERS[k]: text for k, (text, _, _) in enumerate(rows)}
    if kind == "multi":
        answer = "".join(LETTERS[k] for k, (_, _, score) in enumerate(rows) if score > 0)
    else:
        ranked = sorted(range(len(rows)), key=lambda k: rows[k][2], reverse=pick.descending)
        answer = "".join(LETTERS[k] for k in ranked)
    return options, answer, {LETTERS[k]: inputs for k, (_, inputs, _) in enumerate(rows)}


def option_count(kind: str, level: int) -> int:
    if kind == "single":
        return 5 if level == 3 else 4
    return 4 if level == 1 else 5


def direction(rng: random.Random, lang: str, low_high: bool = False) -> tuple[bool, str]:
    """Ascending or descending, and how the question says it."""
    descending = rng.random() < 0.5
    if low_high:
        en = "highest first" if descending else "lowest first"
        zh = "从高到低" if descending else "从低到高"
    else:
        en = "largest first" if descending else "smallest first"
        zh = "从大到小" if descending else "从小到大"
    return descending, tr(lang, en, zh)
