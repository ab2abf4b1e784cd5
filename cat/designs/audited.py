"""A reference design's choice of items with its audit items (``cat.engine.audit``): the
same schedule as the IRT design's, aimed at the design's own chances of a right answer."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from cat.engine.audit import audit_targets, pick_audits
from irt.types import BoolArray, FloatArray, IntArray


class ChoosingTest(Protocol):
    """What a reference design's test offers the audit."""

    available: BoolArray

    def select(self, rows: IntArray, k: int = 1) -> IntArray: ...

    def answer_chances(self) -> FloatArray: ...

    def preference(self, rows: IntArray) -> FloatArray: ...


def select_with_audits(
    test: ChoosingTest, rows: IntArray, k: int, n_given: int, every: int | None
) -> IntArray:
    """(len(rows), k) the design's next ``k`` items for examinees ``rows``, each of whom
    has answered ``n_given``; where one of those k is an audit, the audit item replaces
    the design's last choice (the k items stay distinct)."""
    chosen = np.array(test.select(rows, k), dtype=np.int_)
    if not every or rows.size == 0:
        return chosen
    targets = [audit_targets(np.full(len(rows), n_given + col), every) for col in range(k)]
    audits = [col for col in range(k) if np.isfinite(targets[col][0])]
    if not audits:
        return chosen
    chances = test.answer_chances()[rows]
    preference = np.where(test.available[rows], test.preference(rows), -np.inf)
    available = test.available[rows].copy()
    # The design's own picks before the audits stay; the audits take the last places.
    keep = k - len(audits)
    every_row = np.arange(len(rows))
    for col in range(keep):
        available[every_row, chosen[:, col]] = False
    picked = chosen[:, :keep]
    for col in audits:
        audit = pick_audits(chances, available, targets[col], preference)
        available[every_row, audit] = False
        picked = np.column_stack([picked, audit])
    return np.asarray(picked, dtype=np.int_)
