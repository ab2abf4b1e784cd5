"""Run a reference design on recorded answers, predicting at several test lengths in one
pass (the designs' item order does not depend on the planned length)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from cat.designs.flatness import difficulty_gain
from cat.errors import CatError
from irt.types import BoolArray, FloatArray, IntArray


class ReferenceTest(Protocol):
    """What ``MixtureTest`` and ``LowRankTest`` share."""

    available: BoolArray

    def select(self, rows: IntArray, k: int = 1) -> IntArray: ...

    def record(self, rows: IntArray, items: IntArray, right: FloatArray) -> None: ...

    def refit(self, rows: IntArray) -> None: ...

    def predicted_accuracy(self) -> FloatArray: ...

    def item_expectations(self) -> FloatArray: ...

    def answer_chances(self) -> FloatArray: ...


def replay_reference_test(
    test: ReferenceTest,
    right: FloatArray,
    lengths: list[int],
    per_step: int = 1,
    gains: dict[int, FloatArray] | None = None,
    expectations: dict[int, tuple[BoolArray, FloatArray]] | None = None,
) -> tuple[dict[int, FloatArray], BoolArray]:
    """Ask each examinee up to max(``lengths``) items of ``test``, ``per_step`` at a time,
    answering from ``right`` (E, J; 1/0); the predicted accuracy at each length (an
    examinee with fewer answerable items stops early) and the items given by the end.
    ``gains``, when given, receives each length's ``difficulty_gain`` of the answers
    under the design's own chances (``cat.designs.flatness``); ``expectations`` each
    length's (items given, each item's expected chance of a right answer)."""
    if not lengths or min(lengths) < 1:
        raise CatError("give test lengths of at least 1 item")
    if per_step < 1:
        raise CatError(f"items per step must be at least 1, got {per_step}")
    start = test.available.copy()
    checkpoints = sorted(set(lengths))
    out: dict[int, FloatArray] = {}
    asked = 0
    for target in checkpoints:
        while asked < target:
            k = min(per_step, target - asked)
            left = test.available.sum(axis=1)
            rows = np.flatnonzero(left >= 1)
            if rows.size == 0:
                break
            k = int(min(k, left[rows].min()))
            chosen = test.select(rows, k)
            for col in range(k):
                items = chosen[:, col]
                test.record(rows, items, np.asarray(right[rows, items], dtype=np.float64))
            test.refit(rows)
            asked += k
        out[target] = test.predicted_accuracy()
        given = start & ~test.available
        if gains is not None:
            gains[target] = difficulty_gain(given, right, test.answer_chances())
        if expectations is not None:
            expectations[target] = (given, test.item_expectations())
    return out, start & ~test.available
