"""Marginal maximum likelihood for multidimensional pools of mixed 2PL, graded, gpcm and
nominal items (``irt.mirt_polytomous``) by EM (Bock & Aitkin 1981):

- ``MirtPolytomousCalibrator``: a confirmatory model (a loading pattern) on the full
  product grid, with the factor correlations optionally free (unit variances, zero
  means; ``irt.mirt_mstep.correlation_step`` maximises the latent part of each cycle);
- ``BifactorPolytomousCalibrator``: a bifactor model (a general factor and one specific
  factor per item at most, all uncorrelated) with Gibbons–Hedeker dimension reduction.

Each cycle is an E-step (``irt.mirt_polytomous_estep``) and safeguarded Fisher scoring
per group of like items (``irt.mirt_polytomous_mstep``), so the log-likelihood never
falls; ``irt.estimation.em_loop`` runs the cycles, SQUAREM-accelerated (Varadhan &
Roland 2008), on one vector of every group's internal coordinates. EM stops when no
internal coordinate (slopes, thresholds — graded gaps as logs —, free ak, correlation
angles) moves more than ``tol`` between cycles. R mirt stops at 1e-4 with Ramsay
acceleration, which can leave it 1e-3..1e-2 (mean relative) from the optimum on flat
likelihoods; the default here is tighter, so our log-likelihood is the maximum of the
quadrature likelihood.
``accelerate=False`` runs plain EM cycles, whose per-cycle change is what a loose mirt
tolerance (e.g. ``bfactor(..., TOL = 3e-3)``) was judged on: on a likelihood that keeps
rising along a ridge (a specific factor collapsing onto one item), stopping there is
the only way to land where mirt stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import numpy as np

from irt.errors import IRTError
from irt.estimation.em_loop import run_em
from irt.mirt_calibrator import MultidimensionalCalibrator
from irt.mirt_estep import product_grid
from irt.mirt_polytomous import CategoryLayout
from irt.mirt_polytomous_cycles import BifactorBlocks, FullGrid, GroupEM
from irt.mirt_polytomous_estep import bifactor_columns
from irt.mirt_polytomous_mstep import GroupCoordinates
from irt.mirt_polytomous_start import (
    ItemTypes,
    checked_pattern,
    params_from,
    resolve_types,
    start_naturals,
)
from irt.mirt_vector import oriented
from irt.polytomous_layout import Patterns
from irt.polytomous_responses import PolytomousResponses
from irt.structures import TieredGrid
from irt.types import BoolArray, FloatArray, IntArray

__all__ = ["BifactorPolytomousCalibrator", "MirtPolytomousCalibrator"]


class _Calibrator(MultidimensionalCalibrator):
    """The fit both calibrators share: types, start values, EM on the latent structure's
    problem, the pool and the record of the fit. A structure supplies the loading
    pattern (``pattern_for``), the items' pattern on its grid (``_local_pattern``) and
    how their slopes map back (``_place``), and its EM problem (``_problem``)."""

    _what = "multidimensional polytomous EM"
    factors: tuple[str, ...]

    def __init__(
        self,
        item_types: ItemTypes,
        tol: float,
        max_iter: int,
        scoring_steps: int,
        accelerate: bool,
    ) -> None:
        self._set_cycles(tol, max_iter, scoring_steps)
        self.item_types = item_types
        self.accelerate = accelerate

    def pattern_for(self, n_items: int) -> BoolArray:
        """The loading pattern of ``n_items`` items on the model's factors."""
        raise NotImplementedError

    def _local_pattern(self, n_items: int) -> BoolArray:
        """The items' loading pattern on the E-step's grid."""
        return self.pattern_for(n_items)

    def _problem(
        self, coords: list[GroupCoordinates], layout: CategoryLayout, patterns: Patterns
    ) -> GroupEM:
        raise NotImplementedError

    def _place(self, items: IntArray, local: FloatArray) -> FloatArray:
        """The slopes of ``items`` on the model's factors from those on the grid's."""
        return local

    def fit(self, responses: PolytomousResponses) -> Self:
        self._started()
        local = self._local_pattern(responses.n_items)
        types = resolve_types(self.item_types, responses)
        layout = CategoryLayout.of(types, responses.n_categories)
        coords = [GroupCoordinates.of(g, local[g.items]) for g in layout.groups]
        problem = self._problem(coords, layout, Patterns.of(responses.values, layout))
        naturals = start_naturals(layout, responses, local)
        start = [c.to_psi(*nat) for c, nat in zip(coords, naturals, strict=True)]
        run = run_em(
            problem,
            problem.pack(start),
            tol=self.tol,
            max_iter=self.max_iter,
            accelerate=self.accelerate,
            stabilise=True,
        )
        psis, corr = problem.unpack(run.x)
        pattern = self.pattern_for(responses.n_items)
        corr = np.eye(pattern.shape[1]) if corr is None else corr
        naturals = problem.naturals(psis)
        pool = params_from(
            responses, types, layout, naturals, pattern, self.factors, corr, self._place
        )
        params = oriented(pool)
        n_ak = sum(
            t.family.free_scores(int(k) - 1)
            for t, k in zip(params.item_types, params.n_categories, strict=True)
        )
        g = problem.n_correlated
        self._record(
            params=params,
            loglik=run.evaluation.loglik,
            logpost=run.evaluation.logpost,
            run=run,
            n_parameters=int(np.count_nonzero(params.pattern))
            + int((params.n_categories - 1).sum())
            + n_ak
            + g * (g - 1) // 2,
            n_categories=params.n_categories,
        )
        self._set_criteria(responses.n_subjects)
        return self


class MirtPolytomousCalibrator(_Calibrator):
    """Fit a confirmatory multidimensional pool of 2PL, graded, gpcm and nominal items.

    ``pattern`` (items × factors) marks the free slopes; ``item_types`` one for all, one
    per item, or None for mirt's default (2PL for two categories, graded otherwise).
    ``correlated``: every factor correlation free (unit variances), else R = I.
    ``n_quad`` points per dimension on [−``bound``, ``bound``] (mirt's default for the
    number of factors when None: 31 for two).

    ``fit(responses)`` sets ``params_``, ``loglik_`` (``logpost_``, the same without
    priors), ``n_iter_``, ``converged_``, ``n_parameters_``, ``df_`` (Π_j K_j − 1 −
    n_parameters_, mirt's df), ``trace_``, ``aic_``, ``bic_`` and ``seconds_``.
    """

    def __init__(
        self,
        pattern: BoolArray | Sequence[Sequence[bool]],
        item_types: ItemTypes = None,
        factors: Sequence[str] | None = None,
        *,
        correlated: bool = False,
        n_quad: int | None = None,
        bound: float = 6.0,
        tol: float = 1e-6,
        max_iter: int = 3000,
        scoring_steps: int = 3,
        accelerate: bool = True,
    ) -> None:
        super().__init__(item_types, tol, max_iter, scoring_steps, accelerate)
        self.pattern = np.asarray(pattern)
        k = self.pattern.shape[1] if self.pattern.ndim == 2 else 0
        self.factors = (
            tuple(factors) if factors is not None else tuple(f"F{i + 1}" for i in range(k))
        )
        if len(self.factors) != k or len(set(self.factors)) != k:
            raise IRTError(f"{k} factors need {k} distinct names")
        self.correlated = bool(correlated) and k > 1
        self.points = product_grid(max(k, 1), n_quad, bound)

    def pattern_for(self, n_items: int) -> BoolArray:
        return checked_pattern(self.pattern, n_items)

    def _problem(
        self, coords: list[GroupCoordinates], layout: CategoryLayout, patterns: Patterns
    ) -> GroupEM:
        n_correlated = self.points.shape[1] if self.correlated else 0
        structure = FullGrid(self.points, n_correlated)
        return GroupEM(coords, layout, patterns, structure, self.scoring_steps)


class BifactorPolytomousCalibrator(_Calibrator):
    """Fit a bifactor pool of 2PL, graded, gpcm and nominal items by EM with dimension
    reduction (general + one specific factor at a time, ``n_quad`` points on each).

    ``specific``: each item's specific factor (0-based) or None / a negative number for
    an item on the general factor only. Factors are named ``general``, ``S1``, ``S2``…
    unless ``factors`` names them. ``fit`` sets the same attributes as
    ``MirtPolytomousCalibrator.fit``.
    """

    def __init__(
        self,
        specific: Sequence[int | None],
        item_types: ItemTypes = None,
        factors: Sequence[str] | None = None,
        *,
        n_quad: int = 31,
        bound: float = 6.0,
        tol: float = 1e-6,
        max_iter: int = 3000,
        scoring_steps: int = 3,
        accelerate: bool = True,
    ) -> None:
        super().__init__(item_types, tol, max_iter, scoring_steps, accelerate)
        codes = np.array([-1 if s is None or s < 0 else int(s) for s in specific], dtype=np.int_)
        n_blocks = int(codes.max()) + 1 if codes.size else 0
        if n_blocks < 1:
            raise IRTError("a bifactor model needs at least one specific factor")
        empty = [s for s in range(n_blocks) if np.count_nonzero(codes == s) < 2]
        if empty:
            raise IRTError(f"specific factor {empty[0]} has fewer than 2 items")
        self.specific = codes
        self.n_blocks = n_blocks
        names = (
            tuple(factors)
            if factors is not None
            else ("general", *(f"S{s + 1}" for s in range(n_blocks)))
        )
        if len(names) != n_blocks + 1 or len(set(names)) != len(names):
            raise IRTError(f"{n_blocks + 1} factors need {n_blocks + 1} distinct names")
        self.factors = names
        self.plane = TieredGrid.bifactor(n_blocks, n_quad, bound)
        self.points = self.plane.local

    def pattern_for(self, n_items: int) -> BoolArray:
        """The loading pattern on (general, S1, S2 ...) of ``n_items`` items."""
        if self.specific.size != n_items:
            raise IRTError(f"{self.specific.size} specific factors given for {n_items} items")
        pattern = np.zeros((n_items, self.n_blocks + 1), dtype=bool)
        pattern[:, 0] = True
        rows = np.flatnonzero(self.specific >= 0)
        pattern[rows, 1 + self.specific[rows]] = True
        return pattern

    def _local_pattern(self, n_items: int) -> BoolArray:
        """Every item on the plane's general axis, and on its specific one if it has one."""
        self.pattern_for(n_items)  # checks the count
        return np.column_stack([np.ones(n_items, bool), self.specific >= 0])

    def _problem(
        self, coords: list[GroupCoordinates], layout: CategoryLayout, patterns: Patterns
    ) -> GroupEM:
        blocks, general = bifactor_columns(layout, self.specific, self.n_blocks)
        structure = BifactorBlocks(blocks, general, self.plane)
        return GroupEM(coords, layout, patterns, structure, self.scoring_steps)

    def _place(self, items: IntArray, local: FloatArray) -> FloatArray:
        rows = np.zeros((items.size, self.n_blocks + 1))
        rows[:, 0] = local[:, 0]
        on = self.specific[items] >= 0
        rows[np.flatnonzero(on), 1 + self.specific[items][on]] = local[on, 1]
        return rows
