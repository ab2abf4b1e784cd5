"""Run a reference design on recorded answers, predicting at several test lengths in one
pass (the designs' item order does not depend on the planned length)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from cat.designs.audited import select_with_audits
from cat.designs.flatness import difficulty_gain, slope_z
from cat.engine.audit import AUDIT_EVERY
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

    def preference(self, rows: IntArray) -> FloatArray: ...


def replay_reference_test(
    test: ReferenceTest,
    right: FloatArray,
    lengths: list[int],
    per_step: int = 1,
    gains: dict[int, FloatArray] | None = None,
    expectations: dict[int, tuple[BoolArray, FloatArray]] | None = None,
    slopes: dict[int, FloatArray] | None = None,
    audit_every: int | None = AUDIT_EVERY,
) -> tuple[dict[int, FloatArray], BoolArray]:
    """Ask each examinee up to max(``lengths``) items of ``test``, ``per_step`` at a time,
    answering from ``right`` (E, J; 1/0); the predicted accuracy at each length (an
    examinee with fewer answerable items stops early) and the items given by the end.
    ``gains``, when given, receives each length's ``difficulty_gain`` of the answers
    under the design's own chances (``cat.designs.flatness``); ``expectations`` each
    length's (items given, each item's expected chance of a right answer); ``slopes``
    each length's ``slope_z`` of the answers against the chances the design gave them
    when it chose them. Every ``audit_every``-th item is an audit item
    (``cat.engine.audit``), as in ``cat assess``."""
    if not lengths or min(lengths) < 1:
        raise CatError("give test lengths of at least 1 item")
    if per_step < 1:
        raise CatError(f"items per step must be at least 1, got {per_step}")
    start = test.available.copy()
    checkpoints = sorted(set(lengths))
    out: dict[int, FloatArray] = {}
    n_rows = len(start)
    width = checkpoints[-1]
    asked_right = np.zeros((n_rows, width))
    asked_chance = np.full((n_rows, width), np.nan)
    asked_mask = np.zeros((n_rows, width), dtype=bool)
    asked = 0
    for target in checkpoints:
        while asked < target:
            k = min(per_step, target - asked)
            left = test.available.sum(axis=1)
            rows = np.flatnonzero(left >= 1)
            if rows.size == 0:
                break
            k = int(min(k, left[rows].min()))
            chosen = select_with_audits(test, rows, k, asked, audit_every)
            chances = test.answer_chances() if slopes is not None else None
            for col in range(k):
                items = chosen[:, col]
                answers = np.asarray(right[rows, items], dtype=np.float64)
                if chances is not None:
                    asked_right[rows, asked + col] = answers
                    asked_chance[rows, asked + col] = chances[rows, items]
                    asked_mask[rows, asked + col] = True
                test.record(rows, items, answers)
            test.refit(rows)
            asked += k
        out[target] = test.predicted_accuracy()
        given = start & ~test.available
        if gains is not None:
            gains[target] = difficulty_gain(given, right, test.answer_chances())
        if expectations is not None:
            expectations[target] = (given, test.item_expectations())
        if slopes is not None:
            slopes[target] = slope_z(asked_right, asked_chance, asked_mask)
    return out, start & ~test.available
