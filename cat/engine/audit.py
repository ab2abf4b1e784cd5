"""Audit items: every tenth item of a test is chosen away from the current estimate.

An adaptive test asks items a model gets right about half the time. That is what makes it
efficient, and what blinds it to a model whose answers ignore difficulty (a broken answer
format, a contaminated subset, a wrong prompt): on items at its own level such a model
looks like any other, so neither person fit nor the prediction can tell (measured on the
shipped pools, issue 41: a model right 40% of the time on every item was predicted at
22% on the English demo pool and 55% on MMLU-Pro after 60 items, unflagged; person fit in
adaptive tests has little power for this reason, van Krimpen-Stoop & Meijer 1999).

So after the first 30 items, one item in ten is an audit (one in five up to the 60th):
in turn an easy one (among the items whose
chance of a right answer, at the current estimate, is at least ``EASY``, the one the
design's own rule likes best: for the IRT design the most informative, which lies near
``EASY``) and a hard one (chance at most ``HARD``). A model that follows
difficulty gets the easy audits right and the hard ones wrong about as predicted; a flat
one does not, and ``cat.designs.flatness.slope_check`` sees it. The audits still inform
the estimate (an item at a chance of .85 carries about half the information of one at
.5), so they cost about a twentieth of the test's information.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cat.engine.names import AUDIT_EVERY
from cat.engine.selection import PoolInfo, SelectionPolicy, SelectionState
from irt.types import BoolArray, FloatArray, IntArray

__all__ = [
    "AUDIT_AFTER",
    "AUDIT_DENSE_UNTIL",
    "AUDIT_EVERY",
    "EASY",
    "HARD",
    "Audited",
    "audit_number",
    "audit_targets",
    "pick_audits",
]

#: No item up to this one is an audit: a short test needs every item it has for the
#: estimate (on ARC, 30 items with an audit every 10th from the 10th lost 8-12% in MAE).
AUDIT_AFTER = 30
#: Up to this item the audits come twice as often, so that a 60-item test holds six.
AUDIT_DENSE_UNTIL = 60
#: The chance of a right answer an easy audit item is chosen at, and a hard one.
EASY = 0.9
HARD = 0.15


def audit_number(step: npt.ArrayLike, every: int | None) -> IntArray:
    """Per item number ``step`` (1 for the first item), which audit it is (1, 2, ...) or 0
    when it is not one: none up to item ``AUDIT_AFTER``, then one every ``every`` // 2
    items up to ``AUDIT_DENSE_UNTIL``, then one every ``every`` (with every = 10: items
    35, 40, ..., 60, then 70, 80, ...)."""
    n = np.asarray(step, dtype=np.int_)
    if not every:
        return np.zeros_like(n)
    dense = max(every // 2, 1)
    in_dense = (n > AUDIT_AFTER) & (n <= AUDIT_DENSE_UNTIL) & ((n - AUDIT_AFTER) % dense == 0)
    dense_total = (AUDIT_DENSE_UNTIL - AUDIT_AFTER) // dense
    later = (n > AUDIT_DENSE_UNTIL) & ((n - AUDIT_DENSE_UNTIL) % every == 0)
    return np.asarray(
        np.where(
            in_dense,
            (n - AUDIT_AFTER) // dense,
            np.where(later, dense_total + (n - AUDIT_DENSE_UNTIL) // every, 0),
        ),
        dtype=np.int_,
    )


def audit_targets(n_given: npt.ArrayLike, every: int | None) -> FloatArray:
    """Per examinee with ``n_given`` items so far, the chance its next item is chosen at
    when it is an audit (``audit_number``; easy and hard in turn), NaN when it is not."""
    number = audit_number(np.asarray(n_given, dtype=np.int_) + 1, every)
    return np.where(number > 0, np.where(number % 2 == 1, EASY, HARD), np.nan)


def pick_audits(
    chances: FloatArray,
    available: BoolArray,
    targets: FloatArray,
    preference: FloatArray | None = None,
) -> IntArray:
    """Per row, an audit item: among the available items at least as easy as its
    ``targets`` chance (E,) for an easy audit (at least as hard for a hard one), the one of
    largest ``preference`` (E, J: the design's own liking, the IRT design's information);
    where there is none, the available item whose chance (``chances``, (E, J)) lies
    nearest the target."""
    easy = targets[:, None] >= 0.5
    beyond = np.where(easy, chances >= targets[:, None], chances <= targets[:, None])
    eligible = beyond & available
    distance = np.where(available, np.abs(chances - targets[:, None]), np.inf)
    nearest = np.asarray(distance.argmin(axis=1), dtype=np.int_)
    liking = -distance if preference is None else preference
    keys = np.where(eligible, liking, -np.inf)
    best = np.asarray(keys.argmax(axis=1), dtype=np.int_)
    return np.asarray(np.where(eligible.any(axis=1), best, nearest), dtype=np.int_)


@dataclass(frozen=True)
class Audited:
    """``base``'s choice, but an audit item at every ``every``-th item of a pool of 0/1
    items (a pool of scored items has no chance of "right" to aim at: ``base`` only)."""

    base: SelectionPolicy
    every: int = AUDIT_EVERY

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        chosen = np.array(self.base.select(pool, state, rng), dtype=np.int_)
        if pool.params.scored:
            return chosen
        targets = audit_targets(state.n_given, self.every)
        rows = np.flatnonzero(np.isfinite(targets))
        if rows.size:
            theta = state.theta[rows]
            chances = np.asarray(pool.params.expected_score(theta), dtype=np.float64)
            information = pool.at(theta).astype(np.float64)
            chosen[rows] = pick_audits(chances, state.available[rows], targets[rows], information)
        return chosen
