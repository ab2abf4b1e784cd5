"""EM cycles of the multidimensional polytomous model (``irt.mirt_polytomous``) on one
flat vector, for the one loop of ``irt.estimation.em_loop``: every group's internal
coordinates ψ (``irt.mirt_polytomous_mstep.GroupCoordinates``: slopes, thresholds with
graded gaps as logs, free ak) and then the free correlations' angles. The M-step is
safeguarded Fisher scoring per group of like items; the latent structure — the full
product grid (``FullGrid``) or the bifactor reduction (``BifactorBlocks``), each a
``GroupStructure`` — supplies the E-step (``irt.mirt_polytomous_estep``) and the
correlations' update."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from irt.estimation.em_loop import max_abs_change
from irt.mirt_estep import log_weights
from irt.mirt_mstep import angles_from_correlation, correlation_from_angles, correlation_step
from irt.mirt_polytomous import CategoryLayout
from irt.mirt_polytomous_estep import BifactorEStep, Naturals, bifactor_e_step, table_of
from irt.mirt_polytomous_mstep import GroupCoordinates, group_m_step
from irt.polytomous_estep import EStep, e_step
from irt.polytomous_layout import Patterns
from irt.structures import Grid, TieredGrid
from irt.types import FloatArray, IntArray


@dataclass(frozen=True)
class GroupEvaluation:
    """An E-step: the groups' ψ rows and the correlations it ran at, and its result
    (expected counts of every (item, score) pair at every node, log-likelihood)."""

    psis: list[FloatArray]
    correlation: FloatArray | None
    step: EStep | BifactorEStep

    @property
    def loglik(self) -> float:
        return self.step.loglik

    @property
    def logpost(self) -> float:
        return self.step.loglik  # no priors


class GroupStructure(Protocol):
    """How the latent structure of a factor model of scored items turns the log
    probabilities of every (item, score) pair at its ``points`` into the E-step, and
    (where it has free correlations among its first ``n_correlated`` factors) their
    update."""

    @property
    def points(self) -> FloatArray: ...

    @property
    def n_correlated(self) -> int: ...

    def e_step(
        self, patterns: Patterns, table: FloatArray, correlation: FloatArray | None
    ) -> EStep | BifactorEStep: ...

    def correlation_step(
        self, patterns: Patterns, evaluation: GroupEvaluation
    ) -> FloatArray | None: ...


@dataclass(frozen=True)
class FullGrid:
    """The full product grid at ``points``, its first ``n_correlated`` factors
    correlated (0: none)."""

    points: FloatArray
    n_correlated: int

    def e_step(
        self, patterns: Patterns, table: FloatArray, correlation: FloatArray | None
    ) -> EStep:
        corr = np.eye(self.points.shape[1]) if correlation is None else correlation
        return e_step(patterns, table, Grid(self.points, log_weights(self.points, corr)))

    def correlation_step(
        self, patterns: Patterns, evaluation: GroupEvaluation
    ) -> FloatArray | None:
        if evaluation.correlation is None:
            return None
        assert isinstance(evaluation.step, EStep)
        mass = patterns.counts @ evaluation.step.posterior
        return correlation_step(evaluation.correlation, mass, self.points)


@dataclass(frozen=True)
class BifactorBlocks:
    """The bifactor reduction: every item on the (G, S) plane of its block."""

    blocks: list[IntArray]  # the (item, score) columns of each block's items
    general: IntArray  # and of the general-only items
    plane: TieredGrid

    @property
    def points(self) -> FloatArray:
        return self.plane.local

    @property
    def n_correlated(self) -> int:
        return 0

    def e_step(
        self, patterns: Patterns, table: FloatArray, correlation: FloatArray | None
    ) -> BifactorEStep:
        return bifactor_e_step(patterns, table, self.blocks, self.general, self.plane)

    def correlation_step(self, patterns: Patterns, evaluation: GroupEvaluation) -> None:
        return None


@dataclass(frozen=True)
class GroupEM:
    """EM on one flat vector, every group's ψ rows and then, when the structure's
    first ``n_correlated`` factors' correlations are free, their angles (an
    ``irt.estimation.em_loop.EMProblem``): safeguarded Fisher scoring per group of like
    items; the latent structure supplies the E-step and the correlations' update. The
    stopping rule measures the largest move of an internal coordinate."""

    coords: list[GroupCoordinates]
    layout: CategoryLayout
    patterns: Patterns
    structure: GroupStructure
    scoring_steps: int

    @property
    def n_correlated(self) -> int:
        return self.structure.n_correlated

    def pack(self, psis: Sequence[FloatArray], correlation: FloatArray | None = None) -> FloatArray:
        parts = [p.ravel() for p in psis]
        if self.n_correlated > 1:
            corr = np.eye(self.n_correlated) if correlation is None else correlation
            parts.append(angles_from_correlation(corr))
        return np.concatenate(parts)

    def unpack(self, vector: FloatArray) -> tuple[list[FloatArray], FloatArray | None]:
        psis, at = [], 0
        for c in self.coords:
            psis.append(c.clip(vector[at : at + c.free.size].reshape(c.free.shape)))
            at += c.free.size
        corr = None
        if self.n_correlated > 1:
            corr = correlation_from_angles(vector[at:], self.n_correlated)
        return psis, corr

    def naturals(self, psis: list[FloatArray]) -> list[Naturals]:
        return [c.natural(p) for c, p in zip(self.coords, psis, strict=True)]

    def evaluate(self, vector: FloatArray) -> GroupEvaluation:
        psis, corr = self.unpack(vector)
        table = table_of(self.layout, self.naturals(psis), self.structure.points)
        return GroupEvaluation(psis, corr, self.structure.e_step(self.patterns, table, corr))

    def update(self, vector: FloatArray, evaluation: GroupEvaluation) -> FloatArray:
        counts, psis, points = evaluation.step.counts, [], self.structure.points
        for c, psi in zip(self.coords, evaluation.psis, strict=True):
            r = counts[c.group.cols].transpose(2, 0, 1)  # (Q, J_g, K)
            psis.append(group_m_step(c, psi, r, points, self.scoring_steps))
        return self.pack(psis, self.structure.correlation_step(self.patterns, evaluation))

    def clip(self, vector: FloatArray) -> FloatArray:
        return self.pack(*self.unpack(vector))

    def change(self, new: FloatArray, old: FloatArray) -> float:
        return max_abs_change(new, old)
