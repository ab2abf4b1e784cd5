"""The records the scenarios hand to the pool writer, and the error that asks for a redraw.

A scenario's ``single`` returns a ``Calc`` (a computed value and the mistakes that lead to
each wrong option); its ``multi`` and ``order`` return a ``Pick`` (option rows, each with
its verdict or the value that orders it). ``options`` turns either into lettered options
and a key.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Inputs = dict[str, Any]
Row = tuple[str, Inputs, float]  # option text, the numbers behind it, its value or verdict
Mistakes = tuple[tuple[str, float], ...]  # (what went wrong, the value it leads to)


class PoorDrawError(Exception):
    """The drawn numbers make a poor question (implausible, ambiguous): draw again."""


@dataclass(frozen=True)
class Calc:
    """A single-choice case: a computed value and the wrong values mistakes lead to.

    ``digits`` is how the answer is rounded (the question says so); None means the value
    is exact and shown as is. ``slip`` offers the value rounded the wrong way, which is fair
    only when the key needs no intermediate rounding."""

    question: str
    value: float
    unit: str
    digits: int | None
    formula: str
    variant: str
    inputs: Inputs
    mistakes: Mistakes
    slip: bool = False


@dataclass(frozen=True)
class Pick:
    """A multiple-answer or ordering case. The number in each row is 1/0 (right/wrong)
    for a multiple-answer item and the value that orders the options otherwise; ``stem``
    holds the question's own numbers."""

    question: str
    rows: tuple[Row, ...]
    formula: str
    variant: str
    stem: Inputs
    descending: bool = False


@dataclass(frozen=True)
class Scenario:
    """One content area: its names and the three ways it makes items."""

    id: str
    name_en: str
    name_zh: str
    single: Callable[[random.Random, str, int], Calc]
    multi: Callable[[random.Random, str, int], Pick]
    order: Callable[[random.Random, str, int], Pick]
