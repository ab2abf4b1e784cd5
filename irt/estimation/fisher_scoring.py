"""Safeguarded Fisher scoring, vectorised over items: the one M-step driver of the
models whose items have their own parameters (one row of internal coordinates ψ per
item) and an objective that is a sum over items — the polytomous items on one θ
(``irt.polytomous_mstep``) and on factors (``irt.mirt_polytomous_mstep``), and the
continuous items (``irt.continuous_mstep``).

Each step solves the item's expected information (plus a tiny ridge) against its
gradient, caps the step at ``MAX_STEP`` in any coordinate, and halves it until the item's
objective does not fall (at most ``HALVINGS`` times; an item with no such step keeps its
values). The expected information is positive semi-definite however far an item is from
its optimum, so every M-step is a generalised EM step (Dempster, Laird & Rubin 1977). An
item is dropped once its step is below ``tol``.
"""

from __future__ import annotations

from typing import Protocol, Self

import numpy as np

from irt.estimation.arrays import arange, clip, copy, einsum, eye, namespace
from irt.types import FloatArray, IntArray

__all__ = ["HALVINGS", "MAX_STEP", "ItemObjective", "fisher_scoring", "scoring_step"]

#: Largest Fisher-scoring step in any coordinate.
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
        """The gradient (J, w) and expected information (J, w, w) in ψ; a coordinate
        that must not move has a zero gradient and a unit row in the information."""
        ...

    def clip(self, psi: FloatArray) -> FloatArray:
        """A copy of ψ with every coordinate in its box."""
        ...

    def rows(self, items: IntArray) -> Self:
        """The objective of the items at positions ``items`` only."""
        ...


def scoring_step(grad: FloatArray, info: FloatArray) -> FloatArray:
    """The Fisher-scoring step (J, w) of each item, at most ``MAX_STEP`` in any
    coordinate (numpy or torch, like ``grad``)."""
    xp = namespace(info)
    # A small ridge keeps an item with (almost) no information solvable.
    scale = clip(einsum("jll->j", info) / info.shape[1], 1.0, np.inf)
    mat = info + (1e-9 * scale)[:, None, None] * eye(info.shape[1], info)
    step = xp.linalg.solve(mat, grad[:, :, None])[:, :, 0]
    size = xp.max(xp.abs(step), axis=1, keepdims=True)
    step *= clip(MAX_STEP / clip(size, 1e-300, np.inf), -np.inf, 1.0)
    return step  # type: ignore[no-any-return]


def _halving(
    problem: ItemObjective, psi: FloatArray, step: FloatArray, current: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per item the longest of ``step``, ``step``/2, … that does not lower its objective,
    and that objective; an item with none keeps ``psi``."""
    new, best = copy(psi), copy(current)
    pending = arange(psi.shape[0], psi)
    scale = 1.0
    for _ in range(HALVINGS):
        sub = problem.rows(pending)
        trial = sub.clip(psi[pending] + scale * step[pending])
        value = sub.objective(trial)
        ok = value >= current[pending]
        new[pending[ok]], best[pending[ok]] = trial[ok], value[ok]
        pending = pending[~ok]
        if pending.shape[0] == 0:
            break
        scale *= 0.5
    return new, best


def fisher_scoring(
    problem: ItemObjective, psi: FloatArray, max_steps: int, tol: float
) -> FloatArray:
    """ψ after up to ``max_steps`` safeguarded Fisher-scoring steps from ``psi``, items
    dropped once their step is below ``tol`` (numpy, or torch on ``psi``'s device)."""
    xp = namespace(psi)
    psi = copy(psi)
    current = problem.objective(psi)
    todo = arange(psi.shape[0], psi)
    for _ in range(max_steps):
        sub, start = problem.rows(todo), psi[todo]
        step = scoring_step(*sub.score_and_information(start))
        new, value = _halving(sub, start, step, current[todo])
        moved = xp.max(xp.abs(new - start), axis=1)
        psi[todo], current[todo] = new, value
        todo = todo[moved >= tol]
        if todo.shape[0] == 0:
            break
    return psi
