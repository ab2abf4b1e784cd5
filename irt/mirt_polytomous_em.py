"""Marginal maximum likelihood for multidimensional pools of mixed 2PL, graded, gpcm and
nominal items (``irt.mirt_polytomous``) by EM (Bock & Aitkin 1981):

- ``MirtPolytomousCalibrator``: a confirmatory model (a loading pattern) on the full
  product grid, with the factor correlations optionally free (unit variances, zero
  means; ``irt.mirt_mstep.correlation_step`` maximises the latent part of each cycle);
- ``BifactorPolytomousCalibrator``: a bifactor model (a general factor and one specific
  factor per item at most, all uncorrelated) with Gibbons–Hedeker dimension reduction.

Each cycle is an E-step (``irt.mirt_polytomous_estep``) and safeguarded Fisher scoring
per group of like items (``irt.mirt_polytomous_mstep``), so the log-likelihood never
falls; cycles are accelerated by SQUAREM (Varadhan & Roland 2008), whose extrapolation
is kept only where it beats the plain cycles. EM stops when no internal coordinate
(slopes, thresholds — graded gaps as logs —, free ak, correlation angles) moves more
than ``tol`` between cycles. R mirt stops at 1e-4 with Ramsay acceleration, which can
leave it 1e-3..1e-2 (mean relative) from the optimum on flat likelihoods; the default
here is tighter, so our log-likelihood is the maximum of the quadrature likelihood.
``accelerate=False`` runs plain EM cycles, whose per-cycle change is what a loose mirt
tolerance (e.g. ``bfactor(..., TOL = 3e-3)``) was judged on: on a likelihood that keeps
rising along a ridge (a specific factor collapsing onto one item), stopping there is
the only way to land where mirt stopped.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from irt.errors import ConvergenceWarning, IRTError
from irt.item_checks import item_type
from irt.mirt_estep import log_weights, product_grid
from irt.mirt_mstep import angles_from_correlation, correlation_from_angles, correlation_step
from irt.mirt_polytomous import CategoryLayout, MirtPolytomousParams, MultiItemType
from irt.mirt_polytomous_estep import (
    BifactorEStep,
    Naturals,
    bifactor_columns,
    bifactor_e_step,
    patterns_of,
    plane_points,
    table_of,
)
from irt.mirt_polytomous_mstep import GroupCoordinates, group_m_step
from irt.polytomous_estep import e_step
from irt.polytomous_layout import Patterns
from irt.polytomous_responses import PolytomousResponses
from irt.types import BoolArray, FloatArray, IntArray

__all__ = ["BifactorPolytomousCalibrator", "MirtPolytomousCalibrator"]

# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0

ItemTypes = Sequence[MultiItemType | str] | MultiItemType | str | None


def resolve_types(item_types: ItemTypes, responses: PolytomousResponses) -> list[MultiItemType]:
    """One type per item: given for all, per item, or mirt's default (2PL / graded)."""
    n_cat = responses.n_categories
    if item_types is None:
        return [MultiItemType.default_for(k) for k in n_cat]
    ids = responses.item_ids
    raw = [item_types] * len(n_cat) if isinstance(item_types, str) else list(item_types)
    if len(raw) != len(n_cat):
        raise IRTError(f"{len(raw)} item types for {len(n_cat)} items")
    types = [item_type(MultiItemType, t, item) for t, item in zip(raw, ids, strict=True)]
    for item, t, k in zip(responses.item_ids, types, n_cat, strict=True):
        if t is MultiItemType.TWO_PL and k != 2:
            raise IRTError(f"item {item!r} is 2PL but has {k} categories")
        if t is MultiItemType.NOMINAL and k < 3:
            raise IRTError(f"item {item!r} is nominal but has {k} categories (needs 3+)")
    return types


def start_naturals(
    layout: CategoryLayout, responses: PolytomousResponses, pattern: BoolArray
) -> list[Naturals]:
    """Slopes 1 on the pattern; thresholds from the observed category shares (graded and
    2PL: logit P(X ≥ k); gpcm and nominal: log P(X = k)/P(X = 0)); ak = 1..m."""
    values = responses.values
    out: list[Naturals] = []
    for g in layout.groups:
        shares = np.empty((g.items.size, g.n_cat))
        for row, j in enumerate(g.items):
            col = values[:, j]
            seen = np.bincount(col[col >= 0], minlength=g.n_cat)[: g.n_cat].astype(float)
            shares[row] = (seen + 0.5) / (seen.sum() + 0.5 * g.n_cat)
        if g.kind.scored:
            d = np.log(shares[:, 1:] / shares[:, :1])
            ak = np.tile(np.arange(1.0, g.n_cat), (g.items.size, 1))
        else:
            above = np.cumsum(shares[:, ::-1], axis=1)[:, ::-1][:, 1:]
            d = np.log(above / (1.0 - above))
            ak = None
        out.append((np.where(pattern[g.items], 1.0, 0.0), 1.3 * d, ak))
    return out


class _Fit:
    """The EM state as one flat vector: every group's ψ rows, then correlation angles."""

    def __init__(self, coords: list[GroupCoordinates], n_correlated: int) -> None:
        self.coords = coords
        self.n_correlated = n_correlated
        self.sizes = [c.free.size for c in coords]

    def pack(self, psis: Sequence[FloatArray], correlation: FloatArray | None) -> FloatArray:
        parts = [p.ravel() for p in psis]
        if correlation is not None and self.n_correlated > 1:
            parts.append(angles_from_correlation(correlation))
        return np.concatenate(parts)

    def unpack(self, vec: FloatArray) -> tuple[list[FloatArray], FloatArray | None]:
        psis, at = [], 0
        for c, size in zip(self.coords, self.sizes, strict=True):
            psis.append(c.clip(vec[at : at + size].reshape(c.free.shape)))
            at += size
        corr = None
        if self.n_correlated > 1:
            corr = correlation_from_angles(vec[at:], self.n_correlated)
        return psis, corr


def run_em(
    start: FloatArray,
    cycle: Callable[[FloatArray], tuple[FloatArray, float]],
    tol: float,
    max_iter: int,
    accelerate: bool = True,
) -> tuple[FloatArray, int, bool]:
    """SQUAREM (scheme S3) around ``cycle`` (next vector, log-likelihood at the one it
    was given) until no coordinate moves more than ``tol`` in a cycle; plain EM cycles
    when not ``accelerate``."""
    vec, n_iter = start, 0
    while not accelerate and n_iter < max_iter:
        new, _ = cycle(vec)
        n_iter += 1
        change = float(np.max(np.abs(new - vec)))
        vec = new
        if change < tol:
            return vec, n_iter, True
    while n_iter < max_iter:
        first, _ = cycle(vec)
        second, loglik = cycle(first)
        n_iter += 2
        new = second
        r, v = first - vec, second - 2 * first + vec
        if np.any(v):
            alpha = -min(float(np.linalg.norm(r) / np.linalg.norm(v)), _MAX_EXTRAPOLATION)
            if alpha < -1.0:
                jump = vec - 2 * alpha * r + alpha**2 * v
                landed, jump_loglik = cycle(jump)
                n_iter += 1
                if np.isfinite(jump_loglik) and jump_loglik >= loglik - 1e-9:
                    new = landed
        change = float(np.max(np.abs(new - second))) if new is not second else 0.0
        change = max(change, float(np.max(np.abs(second - first))))
        vec = new
        if change < tol:
            return vec, n_iter, True
    return vec, n_iter, False


class _Calibrator:
    """What both calibrators share: the EM settings and the summaries of a fit."""

    def __init__(
        self,
        item_types: ItemTypes,
        tol: float,
        max_iter: int,
        scoring_steps: int,
        accelerate: bool,
    ) -> None:
        if not tol > 0:
            raise IRTError(f"tol must be positive, got {tol}")
        if max_iter < 1 or scoring_steps < 1:
            raise IRTError("max_iter and scoring_steps must be at least 1")
        self.item_types = item_types
        self.tol = tol
        self.max_iter = max_iter
        self.scoring_steps = scoring_steps
        self.accelerate = accelerate

    def _finish(
        self,
        params: MirtPolytomousParams,
        loglik: float,
        n_iter: int,
        converged: bool,
        n_subjects: int,
        n_correlations: int,
        t0: float,
    ) -> None:
        if not converged:
            warnings.warn(
                f"multidimensional polytomous EM stopped after {n_iter} cycles without converging",
                ConvergenceWarning,
                stacklevel=3,
            )
        params = _oriented(params)
        self.params_ = params
        self.loglik_ = loglik
        self.n_iter_ = n_iter
        self.converged_ = converged
        n_ak = sum(
            int(k) - 2
            for t, k in zip(params.item_types, params.n_categories, strict=True)
            if t is MultiItemType.NOMINAL
        )
        self.n_parameters_ = int(
            np.count_nonzero(params.pattern)
            + (params.n_categories - 1).sum()
            + n_ak
            + n_correlations
        )
        self.df_ = int(np.prod([int(k) for k in params.n_categories], dtype=object)) - 1
        self.df_ -= self.n_parameters_
        self.aic_ = -2.0 * loglik + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * loglik + self.n_parameters_ * float(np.log(n_subjects))
        self.seconds_ = time.perf_counter() - t0


def _m_step(
    coords: list[GroupCoordinates],
    psis: list[FloatArray],
    counts: FloatArray,
    points: FloatArray,
    steps: int,
) -> list[FloatArray]:
    out = []
    for c, psi in zip(coords, psis, strict=True):
        r = counts[c.group.cols].transpose(2, 0, 1)  # (Q, J_g, K)
        out.append(group_m_step(c, psi, r, points, steps))
    return out


def _params_from(
    responses: PolytomousResponses,
    types: list[MultiItemType],
    layout: CategoryLayout,
    naturals: Sequence[Naturals],
    pattern: BoolArray,
    factors: tuple[str, ...],
    correlation: FloatArray,
    place: Callable[[IntArray, FloatArray], FloatArray] | None = None,
) -> MirtPolytomousParams:
    """The pool from each group's naturals; ``place`` maps a group's local slopes to
    rows of the global slope matrix (the identity on a full grid)."""
    n, width = responses.n_items, int(max(responses.n_categories)) - 1
    slopes = np.zeros(pattern.shape)
    d = np.full((n, width), np.nan)
    ak = np.full((n, width), np.nan)
    for g, (a, dd, kk) in zip(layout.groups, naturals, strict=True):
        slopes[g.items] = a if place is None else place(g.items, a)
        d[g.items, : g.m] = dd
        if kk is not None:
            ak[g.items, : g.m] = kk
    return MirtPolytomousParams(
        item_ids=tuple(responses.item_ids),
        item_types=tuple(types),
        slopes=np.where(pattern, slopes, 0.0),
        d=d,
        ak=ak,
        factors=factors,
        correlation=correlation,
        pattern=pattern,
    )


def _oriented(params: MirtPolytomousParams) -> MirtPolytomousParams:
    """Each factor turned so that its slopes sum to a positive number (the likelihood is
    symmetric); its correlations turn with it."""
    sign = np.where(params.slopes.sum(axis=0) < 0, -1.0, 1.0)
    return MirtPolytomousParams(
        item_ids=params.item_ids,
        item_types=params.item_types,
        slopes=params.slopes * sign,
        d=params.d,
        ak=params.ak,
        factors=params.factors,
        correlation=params.correlation * np.outer(sign, sign),
        pattern=params.pattern,
    )


def _checked_pattern(model: object, n_items: int) -> BoolArray:
    raw = np.asarray(model)
    if raw.ndim != 2 or raw.size == 0:
        raise IRTError(f"a loading pattern must be an items × factors matrix, got {raw.shape}")
    if raw.dtype != bool and not np.all((raw == 0) | (raw == 1)):
        raise IRTError("a loading pattern must hold booleans (or 0/1)")
    if raw.shape[0] != n_items:
        raise IRTError(f"the loading pattern has {raw.shape[0]} rows for {n_items} items")
    pattern = raw.astype(bool)
    if np.any(pattern.sum(axis=0) < 2):
        raise IRTError("each factor needs at least 2 items in the loading pattern")
    return pattern


class MirtPolytomousCalibrator(_Calibrator):
    """Fit a confirmatory multidimensional pool of 2PL, graded, gpcm and nominal items.

    ``pattern`` (items × factors) marks the free slopes; ``item_types`` one for all, one
    per item, or None for mirt's default (2PL for two categories, graded otherwise).
    ``correlated``: every factor correlation free (unit variances), else R = I.
    ``n_quad`` points per dimension on [−``bound``, ``bound``] (mirt's default for the
    number of factors when None: 31 for two).

    ``fit(responses)`` sets ``params_``, ``loglik_``, ``n_iter_``, ``converged_``,
    ``n_parameters_``, ``df_`` (Π_j K_j − 1 − n_parameters_, mirt's df), ``aic_``,
    ``bic_`` and ``seconds_``.
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

    def fit(self, responses: PolytomousResponses) -> MirtPolytomousCalibrator:
        t0 = time.perf_counter()
        pattern = _checked_pattern(self.pattern, responses.n_items)
        types = resolve_types(self.item_types, responses)
        layout = CategoryLayout.of(types, responses.n_categories)
        coords = [GroupCoordinates.of(g, pattern[g.items]) for g in layout.groups]
        points, k = self.points, pattern.shape[1]
        patterns = patterns_of(responses.values, layout)
        fit = _Fit(coords, k if self.correlated else 0)
        start = [
            c.to_psi(*nat)
            for c, nat in zip(coords, start_naturals(layout, responses, pattern), strict=True)
        ]

        def naturals(psis: list[FloatArray]) -> list[Naturals]:
            return [c.natural(p) for c, p in zip(coords, psis, strict=True)]

        def cycle(vec: FloatArray) -> tuple[FloatArray, float]:
            psis, corr = fit.unpack(vec)
            corr = np.eye(k) if corr is None else corr
            est = e_step(
                patterns, table_of(layout, naturals(psis), points), log_weights(points, corr)
            )
            psis = _m_step(coords, psis, est.counts, points, self.scoring_steps)
            if self.correlated:
                mass = patterns.counts @ est.posterior
                corr = correlation_step(corr, mass, points)
            return fit.pack(psis, corr), est.loglik

        vec, n_iter, converged = run_em(
            fit.pack(start, np.eye(k)), cycle, self.tol, self.max_iter, self.accelerate
        )
        psis, corr = fit.unpack(vec)
        corr = np.eye(k) if corr is None else corr
        final = e_step(
            patterns, table_of(layout, naturals(psis), points), log_weights(points, corr)
        )
        params = _params_from(responses, types, layout, naturals(psis), pattern, self.factors, corr)
        n_corr = k * (k - 1) // 2 if self.correlated else 0
        self._finish(params, final.loglik, n_iter, converged, responses.n_subjects, n_corr, t0)
        return self


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
        self.points, self.log_w = plane_points(n_quad, bound)

    def pattern_for(self, n_items: int) -> BoolArray:
        if self.specific.size != n_items:
            raise IRTError(f"{self.specific.size} specific factors given for {n_items} items")
        pattern = np.zeros((n_items, self.n_blocks + 1), dtype=bool)
        pattern[:, 0] = True
        rows = np.flatnonzero(self.specific >= 0)
        pattern[rows, 1 + self.specific[rows]] = True
        return pattern

    def fit(self, responses: PolytomousResponses) -> BifactorPolytomousCalibrator:
        t0 = time.perf_counter()
        pattern = self.pattern_for(responses.n_items)
        specific = self.specific
        local_pattern = np.column_stack([np.ones(responses.n_items, bool), specific >= 0])
        types = resolve_types(self.item_types, responses)
        layout = CategoryLayout.of(types, responses.n_categories)
        coords = [GroupCoordinates.of(g, local_pattern[g.items]) for g in layout.groups]
        points, log_w = self.points, self.log_w
        patterns: Patterns = patterns_of(responses.values, layout)
        blocks, general = bifactor_columns(layout, specific, self.n_blocks)
        fit = _Fit(coords, 0)
        start = [
            c.to_psi(*nat)
            for c, nat in zip(coords, start_naturals(layout, responses, local_pattern), strict=True)
        ]

        def naturals(psis: list[FloatArray]) -> list[Naturals]:
            return [c.natural(p) for c, p in zip(coords, psis, strict=True)]

        def run_e(psis: list[FloatArray]) -> BifactorEStep:
            table = table_of(layout, naturals(psis), points)
            return bifactor_e_step(patterns, table, blocks, general, log_w)

        def cycle(vec: FloatArray) -> tuple[FloatArray, float]:
            psis, _ = fit.unpack(vec)
            est = run_e(psis)
            psis = _m_step(coords, psis, est.counts, points, self.scoring_steps)
            return fit.pack(psis, None), est.loglik

        vec, n_iter, converged = run_em(
            fit.pack(start, None), cycle, self.tol, self.max_iter, self.accelerate
        )
        psis, _ = fit.unpack(vec)
        loglik = run_e(psis).loglik

        def place(items: IntArray, local: FloatArray) -> FloatArray:
            rows = np.zeros((items.size, self.n_blocks + 1))
            rows[:, 0] = local[:, 0]
            on = specific[items] >= 0
            rows[np.flatnonzero(on), 1 + specific[items][on]] = local[on, 1]
            return rows

        params = _params_from(
            responses,
            types,
            layout,
            naturals(psis),
            pattern,
            self.factors,
            np.eye(self.n_blocks + 1),
            place,
        )
        self._finish(params, loglik, n_iter, converged, responses.n_subjects, 0, t0)
        return self
