"""The two-tier compensatory multidimensional 2PL/3PL (Cai 2010) calibrated by EM with
the two-tier dimension reduction (``irt.two_tier_estep``; Gibbons & Hedeker 1992; Cai,
Yang & Hansen 2011), Fisher-scoring item M-steps on each item's local grid and the
exact EM update of the general factors' correlations (``irt.mirt_mstep``),
SQUAREM-accelerated (Varadhan & Roland 2008).

    P(x_ij = 1) = c_j + (1 − c_j)·σ(a_j·θ_i + d_j),     θ_i = (G_1..G_G, S_1..S_K)

Each item loads on any of the G general factors (1 ≤ G ≤ 3) and on at most one
specific factor. The general factors are N(0, R), with R free (``correlated=True``) or
I; the specific factors are N(0, 1) and independent of everything, so the correlation
matrix of the result (``irt.mirt_model.MirtParams``, confirmatory) is R ⊕ I. G = 1 is
the bifactor model (``irt.bifactor`` has faster code for that case alone). The E-step
integrates G + 1 dimensions at a time however many specific factors there are, which
makes models out of reach of the full product grid (``irt.mirt_em``) cheap.

Defaults follow R mirt's ``bfactor``: points per dimension chosen for the reduced
dimension G + 1 (31 for G = 1, 15 for G = 2, 9 for G = 3) on [−6, 6] with normalised
normal weights, mirt's start values, no priors, stop when no parameter (slopes, d,
logit c, correlations) moves more than ``tol`` in a cycle. After the fit each factor is
turned so that its slopes sum to a positive number (its correlations turn with it).

Early stops and weak identification. A specific factor on few items, or on items that
a general factor nearly shares, is weakly determined: EM crawls along a flat ridge and
the maximum of the quadrature likelihood may sit at a Heywood boundary (a slope running
to ``MAX_SLOPE``). mirt's own two-tier test is such a case: its asserted coefficients
are where its EM stops at TOL = 1e-2, 3.4 log-likelihood units below where EM is
still climbing after 3,000 cycles (on 11 points; 21 points head the same way), one
item's general and specific slopes past 7 and 9 and its block's other specific slopes
near 0. What an early stop returns therefore depends on the path. ``accelerate=False`` runs
plain EM from mirt's start values, mirt's path: it reproduces those coefficients to
0.4% (mean relative), where SQUAREM, stopped by the same rule, lands 2% away.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import ndtri

from irt.errors import IRTError
from irt.estimation.em_loop import run_em
from irt.mirt_calibrator import MultidimensionalCalibrator
from irt.mirt_estep import Patterns
from irt.mirt_model import MirtParams, Structure
from irt.mirt_mstep import (
    MirtPriors,
    correlation_step,
    m_step,
)
from irt.mirt_vector import MirtVectorEM
from irt.responses import ResponseMatrix
from irt.structures import TieredGrid
from irt.two_tier_estep import (
    NO_SPECIFIC,
    TwoTierExpected,
    TwoTierLayout,
    e_step,
    two_tier_grid,
    two_tier_log_likelihood,
)
from irt.types import BoolArray, IntArray

__all__ = [
    "NO_SPECIFIC",
    "MirtPriors",
    "TwoTierCalibrator",
    "two_tier_log_likelihood",
]

# R mirt's start (model.elements): a normal-ogive loading of 0.5 on every loaded factor,
# made logistic by this factor, and a covariance of 0.25 between correlated factors.
_LOGISTIC = 1.702
_START_LOADING = 0.5
_START_CORRELATION = 0.25


class TwoTierCalibrator(MultidimensionalCalibrator):
    """Fit the two-tier 2PL (3PL with ``guessing``) by EM.

    ``general`` is the items × G boolean pattern of the general factors (named
    ``general_names``, G1, G2, ... by default) and ``specific`` one code per item:
    its specific factor 0..K−1 (named ``specific_names``, S1, S2, ... by default) or
    ``NO_SPECIFIC`` (−1). ``n_quad`` points per dimension (R mirt's for G + 1
    dimensions when None) on [−``bound``, ``bound``]; ``priors`` make the fit Bayes
    modal; ``scoring_steps`` Fisher-scoring steps per item and cycle. ``accelerate=False``
    runs plain EM cycles instead of SQUAREM: slower, but on R mirt's path, so that
    mirt's figures for an early stop (a coarse ``tol``) are reproduced.

    ``fit(responses)`` sets ``params_`` (factors: general, then specific), ``loglik_``
    (marginal log-likelihood), ``logpost_`` (plus the log prior), ``n_iter_``,
    ``converged_``, ``n_parameters_``, ``df_``, ``trace_``, ``aic_``, ``bic_`` (from the
    log-likelihood) and ``seconds_``.
    """

    _what = "two-tier EM"

    def __init__(
        self,
        general: BoolArray | Sequence[Sequence[bool]],
        specific: Sequence[int] | IntArray,
        *,
        general_names: Sequence[str] | None = None,
        specific_names: Sequence[str] | None = None,
        correlated: bool = True,
        guessing: bool = False,
        priors: MirtPriors | None = None,
        n_quad: int | None = None,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        scoring_steps: int = 3,
        accelerate: bool = True,
    ) -> None:
        self._set_cycles(tol, max_iter, scoring_steps)
        n_specific = None if specific_names is None else len(specific_names)
        self.layout = TwoTierLayout.of(general, specific, n_specific)
        g, k = self.layout.n_general, self.layout.n_specific
        gen_names = (
            tuple(general_names)
            if general_names is not None
            else tuple(f"G{i + 1}" for i in range(g))
        )
        spec_names = (
            tuple(specific_names)
            if specific_names is not None
            else tuple(f"S{i + 1}" for i in range(k))
        )
        if len(gen_names) != g:
            raise IRTError(f"{g} general factors but {len(gen_names)} general names")
        self.factors = (*gen_names, *spec_names)
        if len(set(self.factors)) != len(self.factors):
            raise IRTError("factor names repeat")
        self.n_general = g
        self.correlated = bool(correlated) and g > 1
        self.guessing = guessing
        self.priors = priors
        self.n_quad = n_quad
        self.bound = bound
        self.grid = two_tier_grid(self.layout, n_quad, bound)
        self.accelerate = accelerate

    def fit(self, responses: ResponseMatrix) -> TwoTierCalibrator:
        self._started()
        n_items = self.layout.n_items
        if responses.n_items != n_items:
            raise IRTError(
                f"the two-tier layout has {n_items} items, the responses {responses.n_items}"
            )
        data = Patterns.of(responses)
        start = self._start(responses, self.layout.full_pattern())
        n_correlated = self.n_general if self.correlated else 0
        problem = _TwoTierEM(
            start, n_correlated, self.priors, data, self.scoring_steps, self.layout, self.grid
        )
        run = run_em(
            problem,
            problem.vector(start),
            tol=self.tol,
            max_iter=self.max_iter,
            accelerate=self.accelerate,
            stabilise=True,
        )
        self._record_binary(problem, run, data.n_subjects)
        return self

    def _start(self, responses: ResponseMatrix, pattern: BoolArray) -> MirtParams:
        """R mirt's start values (``model.elements``): normal-ogive loadings λ = 0.5 on
        every loaded factor, so slopes 1.702·λ, intercepts 1.702·Φ⁻¹(p)/u with
        u = max(√|1 − Σλ²|, 0.25), general correlations 0.25; c = 0.1 in the 3PL, the
        p-value then taken above it. An early stop is a point on the path from here
        (module docstring), so starting where mirt does makes its figures comparable."""
        observed = responses.observed
        n_obs = observed.sum(axis=0)
        right = ((responses.values == 1) & observed).sum(axis=0)
        p = np.clip(right / np.maximum(n_obs, 1), 0.02, 0.98)
        p = np.where(n_obs > 0, p, 0.5)
        c = np.full(pattern.shape[0], 0.1) if self.guessing else None
        # In the 3PL the curve above c carries (p − c)/(1 − c) of the item's p-value.
        above = p if c is None else np.clip((p - c) / (1 - c), 0.02, 0.98)
        loading = np.where(pattern, _START_LOADING, 0.0)
        uniqueness = np.maximum(np.sqrt(np.abs(1.0 - np.sum(loading**2, axis=1))), 0.25)
        corr = np.eye(pattern.shape[1])
        if self.correlated:
            g = self.n_general
            corr[:g, :g] = np.where(np.eye(g, dtype=bool), 1.0, _START_CORRELATION)
        return MirtParams(
            item_ids=tuple(responses.item_ids),
            slopes=_LOGISTIC * loading,
            d=_LOGISTIC * ndtri(above) / uniqueness,
            factors=self.factors,
            correlation=corr,
            pattern=pattern,
            structure=Structure.CONFIRMATORY,
            c=c,
        )


@dataclass(frozen=True)
class _TwoTierEM(MirtVectorEM[TwoTierExpected]):
    """EM cycles with the two-tier reduction: Fisher scoring per item on its local grid
    (general factors and its specific one), then the general correlations' EM update."""

    layout: TwoTierLayout
    grid: TieredGrid

    def e_step(self, params: MirtParams) -> TwoTierExpected:
        return e_step(self.data, params, self.layout, self.grid)

    def loglik(self, params: MirtParams) -> float:
        return e_step(self.data, params, self.layout, self.grid, counts=False).loglik

    def m_step(self, params: MirtParams, expected: TwoTierExpected) -> MirtParams:
        layout, grid, g = self.layout, self.grid, self.n_correlated
        local = m_step(
            layout.local_params(params), expected.local, grid.local, self.scoring_steps, self.priors
        )
        new = layout.full_params(local, params)
        if g < 2:
            return new
        corr = np.eye(params.n_factors)
        corr[:g, :g] = correlation_step(
            params.correlation[:g, :g], expected.general_mass, grid.general
        )
        return replace(new, correlation=corr)
