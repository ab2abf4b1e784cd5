"""Safeguarded Newton (or Fisher-scoring) steps, vectorised over items: the one M-step
driver of every model whose items have their own parameters (one row of internal
coordinates ψ per item) and an objective that is a sum over items — the binary 1–4PL on
one θ (``irt.mstep``), the polytomous items on one θ (``irt.polytomous_mstep``) and on
factors (``irt.mirt_polytomous_mstep``), the multidimensional (``irt.mirt_mstep``) and
bifactor (``irt.bifactor_mstep``) 2PL/3PL, and the continuous items
(``irt.continuous_mstep``).

Each step solves the item's information (plus a tiny ridge) against its gradient, caps
the step at ``MAX_STEP`` in any coordinate, and shortens it until the item's objective
does not fall (an item with no such step keeps its values). Which information is the
objective's to say: the expected one is positive semi-definite however far an item is
from its optimum; an objective may hand the observed one where it is positive definite,
for Newton's quadratic convergence. Either way no item's objective falls, so every
M-step is a generalised EM step (Dempster, Laird & Rubin 1977).

How an item's step is shortened and when the item is done are the ``Safeguards``: the
defaults suit most models; the binary and bifactor M-steps set theirs (see there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

import numpy as np

from irt.estimation.arrays import arange, clip, copy, einsum, eye, namespace
from irt.types import FloatArray, IntArray

__all__ = [
    "HALVINGS",
    "MAX_STEP",
    "ItemObjective",
    "Safeguards",
    "fisher_scoring",
    "scoring_step",
]

#: Largest step in any coordinate.
MAX_STEP = 2.0
#: A step is halved at most this many times before the item keeps its values.
HALVINGS = 12


class ItemObjective(Protocol):
    """One M-step's objective over J items with coordinates ψ (J, w), a sum of the
    items' own terms, and the data it needs."""

    def objective(self, psi: FloatArray) -> FloatArray:
        """Each item's objective at ψ (J, w), (J,)."""
        ...

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The gradient (J, w) and an information (J, w, w), positive semi-definite, in
        ψ; a coordinate that must not move has a zero gradient and a unit row in the
        information."""
        ...

    def clip(self, psi: FloatArray) -> FloatArray:
        """A copy of ψ with every coordinate in its box."""
        ...

    def rows(self, items: IntArray) -> Self:
        """The objective of the items at positions ``items`` only."""
        ...


@dataclass(frozen=True)
class Safeguards:
    """How a step is shortened and when an item is done.

    ``ridge``: the information's diagonal is raised by this times its mean (at least
    1) before it is solved, so that an item with (almost) no information has a step,
    and one capped by ``MAX_STEP``; how far such a step goes decides how fast an
    unidentified coordinate runs toward its bound. ``tries``: the step lengths tried,
    the full step then each ``shrink`` times the last, before the item keeps its
    values. ``with_half``: each length is also tried at half and the better of the two
    taken, which stops a step from zigzagging across a narrow valley (on a ridge the
    full step can overshoot to the far side, gaining almost nothing each time, for
    hundreds of steps). ``slack``: a trial is taken when
    its objective is at least the current one less ``slack`` times its size (rounding
    on items with huge objectives). An item is done once a step moved none of its
    coordinates by ``tol`` or more (the driver's argument), or, before its next step is
    taken, once that step would move no coordinate by more than ``settled`` or promises
    (to second order, gradient·step) a gain of no more than ``min_gain``: along a flat
    ridge the second happens first, and further steps there buy nothing.
    """

    ridge: float = 1e-9
    tries: int = HALVINGS
    shrink: float = 0.5
    with_half: bool = False
    slack: float = 0.0
    settled: float = 0.0
    min_gain: float = -np.inf


#: The defaults.
DEFAULT_SAFEGUARDS = Safeguards()

_Objective = TypeVar("_Objective", bound=ItemObjective)


def scoring_step(grad: FloatArray, info: FloatArray, ridge: float = 1e-9) -> FloatArray:
    """The Newton (scoring) step (J, w) of each item, at most ``MAX_STEP`` in any
    coordinate, with a ``ridge`` (``Safeguards``) (numpy or torch, like ``grad``)."""
    xp = namespace(info)
    scale = clip(einsum("jll->j", info) / info.shape[1], 1.0, np.inf)
    mat = info + (ridge * scale)[:, None, None] * eye(info.shape[1], info)
    step = xp.linalg.solve(mat, grad[:, :, None])[:, :, 0]
    size = xp.max(xp.abs(step), axis=1, keepdims=True)
    step *= clip(MAX_STEP / clip(size, 1e-300, np.inf), -np.inf, 1.0)
    return step  # type: ignore[no-any-return]


def _within_the_box(
    problem: ItemObjective, psi: FloatArray, grad: FloatArray, info: FloatArray, ridge: float
) -> FloatArray:
    """The step of each item, solved again without the coordinates that sit on their
    bound and that the step pushes further out (the box would hold them where they
    are): the rest then take their best step given those. Without this an item whose
    slope sits on its bound kept a step along the slope that the box cut off, whose
    remainder lowers its objective, and spent every M-step in a futile line search."""
    xp = namespace(psi)
    step = scoring_step(grad, info, ridge)
    blocked = (problem.clip(psi + step) == psi) & (step != 0)
    if not bool(xp.any(blocked)):
        return step
    pinned = blocked[:, :, None] | blocked[:, None, :]
    diagonal = eye(info.shape[1], info)[None] * blocked[:, :, None]
    info = xp.where(pinned, diagonal, info)
    return scoring_step(xp.where(blocked, 0.0, grad), info, ridge)


def _rows(problem: _Objective, items: IntArray, n_items: int) -> _Objective:
    """``problem`` on ``items``, itself where they are all of its ``n_items`` (in order:
    the driver's lists of items only ever lose members)."""
    return problem if items.shape[0] == n_items else problem.rows(items)


def _shortened(
    problem: ItemObjective,
    psi: FloatArray,
    step: FloatArray,
    current: FloatArray,
    guard: Safeguards,
) -> tuple[FloatArray, FloatArray]:
    """Per item the longest of the lengths ``guard`` tries of ``step`` that does not
    lower its objective, and that objective; an item with none keeps ``psi``."""
    xp = namespace(psi)
    new, best = copy(psi), copy(current)
    pending = arange(psi.shape[0], psi)
    scale = 1.0
    for _ in range(guard.tries):
        sub = _rows(problem, pending, psi.shape[0])
        trial = sub.clip(psi[pending] + scale * step[pending])
        value = sub.objective(trial)
        if guard.with_half:
            half = sub.clip(psi[pending] + 0.5 * scale * step[pending])
            half_value = sub.objective(half)
            better = half_value > value
            trial[better] = half[better]
            value = xp.where(better, half_value, value)
        floor = current[pending]
        if guard.slack:
            floor = floor - guard.slack * xp.abs(floor)
        ok = value >= floor
        new[pending[ok]], best[pending[ok]] = trial[ok], value[ok]
        pending = pending[~ok]
        if pending.shape[0] == 0:
            break
        scale *= guard.shrink
    return new, best


def fisher_scoring(
    problem: ItemObjective,
    psi: FloatArray,
    max_steps: int,
    tol: float,
    guard: Safeguards = DEFAULT_SAFEGUARDS,
) -> FloatArray:
    """ψ after up to ``max_steps`` safeguarded steps from ``psi``, items dropped as
    ``guard`` says (numpy, or torch on ``psi``'s device)."""
    xp = namespace(psi)
    psi = copy(psi)
    current = problem.objective(psi)
    todo = arange(psi.shape[0], psi)
    for _ in range(max_steps):
        sub, start = _rows(problem, todo, psi.shape[0]), psi[todo]
        grad, info = sub.score_and_information(start)
        step = _within_the_box(sub, start, grad, info, guard.ridge)
        if guard.settled > 0 or guard.min_gain > -np.inf:
            going = (xp.max(xp.abs(step), axis=1) > guard.settled) & (
                xp.sum(grad * step, axis=1) > guard.min_gain
            )
            todo, step, start = todo[going], step[going], start[going]
            if todo.shape[0] == 0:
                break
            sub = _rows(problem, todo, psi.shape[0])
        new, value = _shortened(sub, start, step, current[todo], guard)
        moved = xp.max(xp.abs(new - start), axis=1)
        psi[todo], current[todo] = new, value
        todo = todo[moved >= tol]
        if todo.shape[0] == 0:
            break
    return psi
