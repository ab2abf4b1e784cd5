"""The E-step of the two-tier compensatory 2PL/3PL (Cai 2010), with its dimension
reduction, and the model's marginal log-likelihood.

Factors are (G_1..G_G, S_1..S_K): each item loads on any of the G general factors,
which are N(0, R), and on at most one specific factor S_s, independent N(0, 1). Given
the general factors g the specific blocks are independent, so a subject's likelihood is

    L_i = Σ_g w_g L_i0(g) Π_s M_is(g),     M_is(g) = Σ_t w_t L_is(g, t),

with L_is(g, t) = Π_{j ∈ s} P_j^y (1 − P_j)^(1 − y) over the block's answered items,
L_i0 the same over the items without a specific factor, w_g the N(0, R) density on the
general product grid and w_t the N(0, 1) density on the specific axis, each normalised
to sum 1 (R mirt's equally spaced nodes; Gibbons & Hedeker 1992; Cai 2010; Cai, Yang &
Hansen 2011). The integral over G + K dimensions becomes K integrals over G + 1: with
the same points per dimension it equals the full product-grid sum exactly, because the
normalised weights of the block-diagonal N(0, R ⊕ I) factorise.

Every item is written on one "local" grid of G + 1 dimensions, the general ones and
"its own specific" one (``n_quad``^(G+1) nodes), so that ``irt.mirt_mstep.m_step`` can
take the items' steps: block s's items get their expected counts from the block's
posterior on that grid,

    post_is(g, t) = w_g L_i0(g) Π_{s' ≠ s} M_is'(g) · w_t L_is(g, t) / L_i,

and an item without a specific factor gets post_i(g)·w_t with its local specific slope
fixed at 0 (Σ_t w_t = 1 leaves its objective that of the general grid). Everything runs
in log space, so long tests do not underflow; identical response patterns are
collapsed (``irt.mirt_estep.Patterns``) and taken in chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.mirt_estep import (
    MAX_GRID_POINTS,
    Expected,
    Patterns,
    default_points,
    item_log_probs,
    product_grid,
)
from irt.mirt_model import MirtParams, Structure
from irt.responses import ResponseMatrix
from irt.structures import TieredGrid
from irt.types import BoolArray, FloatArray, IntArray

#: The specific-factor code of an item that loads on general factors only.
NO_SPECIFIC = -1
#: The number of general factors a two-tier model may have.
MAX_GENERAL = 3
# A chunk's (patterns × local nodes) arrays, one per specific factor and one more, hold
# at most this many numbers together (64 MB of float64): few chunks mean few BLAS calls,
# each of which costs a thread hand-off when the other core is busy.
_CHUNK_CELLS = 2**23
# The local grid's specific dimension, named only inside the E-step's MirtParams.
_LOCAL_SPECIFIC = "_specific"


@dataclass(frozen=True)
class TwoTierLayout:
    """Which general factors each item loads on (J × G booleans) and its specific
    factor (J codes, ``NO_SPECIFIC`` or 0..K−1)."""

    general: BoolArray
    specific: IntArray
    n_specific: int

    @classmethod
    def of(
        cls,
        general: BoolArray | Sequence[Sequence[bool]],
        specific: Sequence[int] | IntArray,
        n_specific: int | None = None,
    ) -> TwoTierLayout:
        """The layout, checked: G in 1..``MAX_GENERAL``, one code per item, each
        factor on at least 2 items and every item on some factor. ``n_specific``
        defaults to the largest code + 1."""
        raw = np.asarray(general)
        if raw.ndim != 2 or raw.size == 0:
            raise IRTError(
                "the general loading pattern must be a non-empty items × general-factors "
                f"matrix, got shape {raw.shape}"
            )
        if raw.dtype != bool and not np.all((raw == 0) | (raw == 1)):
            raise IRTError("the general loading pattern must hold booleans (or 0/1)")
        pattern = raw.astype(bool)
        n_items, n_general = pattern.shape
        if not 1 <= n_general <= MAX_GENERAL:
            raise IRTError(
                f"a two-tier model has 1 to {MAX_GENERAL} general factors, got {n_general}"
            )
        codes_raw = np.asarray(specific)
        if codes_raw.shape != (n_items,):
            raise IRTError(
                f"give one specific-factor code per item ({n_items}), got shape {codes_raw.shape}"
            )
        if codes_raw.size and not np.all(np.equal(np.mod(codes_raw, 1), 0)):
            raise IRTError("specific-factor codes must be integers (-1 for none)")
        codes = codes_raw.astype(np.int_)
        k = int(codes.max()) + 1 if n_specific is None else int(n_specific)
        if np.any(codes < NO_SPECIFIC) or np.any(codes >= k):
            raise IRTError(f"specific-factor codes must lie in -1..{k - 1} (-1 for none)")
        few = np.flatnonzero(pattern.sum(axis=0) < 2)
        if few.size:
            raise IRTError(
                "each general factor needs at least 2 items; general factor "
                f"{', '.join(str(int(i) + 1) for i in few)} has fewer"
            )
        counts = np.bincount(codes[codes >= 0], minlength=k)
        small = np.flatnonzero(counts < 2)
        if small.size:
            raise IRTError(
                "each specific factor needs at least 2 items; specific factor "
                f"{', '.join(str(int(s) + 1) for s in small)} has fewer"
            )
        empty = np.flatnonzero(~pattern.any(axis=1) & (codes < 0))
        if empty.size:
            raise IRTError(f"item {int(empty[0]) + 1} loads on no factor")
        return cls(general=pattern, specific=codes, n_specific=k)

    @classmethod
    def from_params(cls, params: MirtParams, n_general: int) -> TwoTierLayout:
        """The layout of ``params`` whose first ``n_general`` factors are the general
        ones; checks that each item loads on at most one of the rest and that the
        correlation matrix is the general block and identity elsewhere."""
        if not 1 <= n_general <= min(MAX_GENERAL, params.n_factors):
            raise IRTError(
                f"a two-tier model has 1 to {MAX_GENERAL} general factors (and no more than "
                f"its {params.n_factors} factors), got {n_general}"
            )
        pattern = np.asarray(params.pattern, dtype=bool)
        rest = pattern[:, n_general:]
        twice = np.flatnonzero(rest.sum(axis=1) > 1)
        if twice.size:
            raise IRTError(
                f"item {params.item_ids[int(twice[0])]!r} loads on more than one specific factor"
            )
        corr = np.asarray(params.correlation)
        outside = corr.copy()
        outside[:n_general, :n_general] = np.eye(n_general)
        if not np.allclose(outside, np.eye(params.n_factors), rtol=0.0, atol=1e-12):
            raise IRTError(
                "the specific factors must be uncorrelated with each other and with the "
                "general ones"
            )
        codes = np.where(rest.any(axis=1), np.argmax(rest, axis=1), NO_SPECIFIC)
        return cls.of(pattern[:, :n_general], codes, params.n_factors - n_general)

    @property
    def n_items(self) -> int:
        return int(self.general.shape[0])

    @property
    def n_general(self) -> int:
        return int(self.general.shape[1])

    def blocks(self) -> list[IntArray]:
        """The items of each specific factor, in order."""
        return [np.flatnonzero(self.specific == s) for s in range(self.n_specific)]

    def unique(self) -> IntArray:
        """The items without a specific factor."""
        return np.flatnonzero(self.specific == NO_SPECIFIC)

    def full_pattern(self) -> BoolArray:
        """The loading pattern over (general..., specific...) factors."""
        out = np.zeros((self.n_items, self.n_general + self.n_specific), dtype=bool)
        out[:, : self.n_general] = self.general
        loaded = np.flatnonzero(self.specific >= 0)
        out[loaded, self.n_general + self.specific[loaded]] = True
        return out

    def local_params(self, params: MirtParams) -> MirtParams:
        """``params`` on the local grid: the general slopes and each item's own specific
        slope (0, and fixed, without one); the correlation is R ⊕ 1."""
        g = self.n_general
        own = np.zeros(self.n_items)
        loaded = np.flatnonzero(self.specific >= 0)
        own[loaded] = params.slopes[loaded, g + self.specific[loaded]]
        corr = np.eye(g + 1)
        corr[:g, :g] = params.correlation[:g, :g]
        return MirtParams(
            item_ids=params.item_ids,
            slopes=np.column_stack([params.slopes[:, :g], own]),
            d=params.d,
            factors=(*params.factors[:g], _LOCAL_SPECIFIC),
            correlation=corr,
            pattern=np.column_stack([self.general, self.specific >= 0]),
            structure=Structure.CONFIRMATORY,
            c=params.c,
        )

    def full_params(self, local: MirtParams, like: MirtParams) -> MirtParams:
        """``like`` with the slopes, intercepts and asymptotes of ``local``."""
        g = self.n_general
        slopes = np.zeros_like(like.slopes)
        slopes[:, :g] = local.slopes[:, :g]
        loaded = np.flatnonzero(self.specific >= 0)
        slopes[loaded, g + self.specific[loaded]] = local.slopes[loaded, g]
        return MirtParams(
            item_ids=like.item_ids,
            slopes=slopes,
            d=local.d,
            factors=like.factors,
            correlation=like.correlation,
            pattern=like.pattern,
            structure=like.structure,
            c=local.c,
        )


def two_tier_grid(
    layout: TwoTierLayout, n_quad: int | None = None, bound: float = 6.0
) -> TieredGrid:
    """The reduction's structure for ``layout``: ``n_quad`` equally spaced points per
    dimension on [−bound, bound], by default R mirt's number for the reduced dimension
    G + 1 (31 for G = 1, 15 for G = 2); the local grid's node t·Q_g + g is (general
    node g, specific point t)."""
    n_general = layout.n_general
    n = default_points(n_general + 1) if n_quad is None else int(n_quad)
    general = product_grid(n_general, n, bound)
    if n ** (n_general + 1) > MAX_GRID_POINTS:
        fewer = int(np.floor(MAX_GRID_POINTS ** (1.0 / (n_general + 1))))
        raise IRTError(
            f"{n} points per dimension make a local grid of {n ** (n_general + 1):,} nodes "
            f"for {n_general} general factors, more than {MAX_GRID_POINTS:,}; use fewer "
            f"points (n_quad <= {fewer})"
        )
    return TieredGrid.of(layout.n_specific, general, np.linspace(-bound, bound, n))


@dataclass(frozen=True)
class TwoTierExpected:
    """Expected counts on the local grid (``local.n``, ``local.r``: J × T·Qg, for
    ``m_step``; ``local.mass`` is the general mass times w_t), the posterior mass of the
    general grid summed over subjects (Qg,), for the correlations, and the marginal
    log-likelihood at the parameters the E-step used."""

    local: Expected
    general_mass: FloatArray
    loglik: float


def e_step(
    data: Patterns,
    params: MirtParams,
    layout: TwoTierLayout,
    grid: TieredGrid,
    counts: bool = True,
) -> TwoTierExpected:
    """The expected counts under ``params`` (a two-tier model with ``layout``) and its
    marginal log-likelihood; ``counts=False`` computes the log-likelihood only (the
    count arrays are then zero)."""
    g_dims = layout.n_general
    local = layout.local_params(params)
    log_p, log_q = item_log_probs(local, grid.local)  # (J, T·Qg)
    n_items = params.n_items
    n_g = grid.n_general
    n_local = n_g * grid.specific.size
    structure = grid.correlated(params.correlation[:g_dims, :g_dims])
    # A pattern's log-likelihood over items is right·(log P − log Q) + answered·log Q.
    loadings = np.vstack([log_p - log_q, log_q])
    blocks = layout.blocks()
    unique = layout.unique()
    cols = [np.concatenate([items, items + n_items]) for items in blocks]
    cols0 = np.concatenate([unique, unique + n_items])
    loadings0 = structure.general_columns(loadings[cols0])
    block_loadings = [loadings[c] for c in cols]

    n_out = np.zeros((n_items, n_local))
    r_out = np.zeros((n_items, n_local))
    counts0 = np.zeros((2 * unique.size, n_g))  # right, then answered
    general_mass = np.zeros(n_g)
    loglik = 0.0
    n_patterns = data.right.shape[0]
    step = max(1, _CHUNK_CELLS // (n_local * (len(blocks) + 1)))
    for start in range(0, n_patterns, step):
        rows = slice(start, min(start + step, n_patterns))
        both = data.both[rows]
        logliks = [both[:, c] @ load for c, load in zip(cols, block_loadings, strict=True)]
        logliks.append(both[:, cols0] @ loadings0)
        post = structure.posterior(logliks)
        weight = data.counts[rows]
        loglik += post.loglik(weight)
        if not counts:
            continue
        # Each pattern's posterior over the general grid, times its count.
        post_g = post.blocks[-1] * weight[:, None]
        general_mass += post_g.sum(axis=0)
        if unique.size:
            counts0 += both[:, cols0].T @ post_g
        for items, c, block in zip(blocks, cols, post.blocks[:-1], strict=True):
            block *= weight[:, None]
            both_counts = both[:, c].T @ block
            r_out[items] += both_counts[: items.size]
            n_out[items] += both_counts[items.size :]
    if unique.size:
        spread = structure.spread(counts0)
        r_out[unique] = spread[: unique.size]
        n_out[unique] = spread[unique.size :]
    local_mass = structure.spread(general_mass[None, :])[0]
    return TwoTierExpected(Expected(n_out, r_out, local_mass, loglik), general_mass, loglik)


def two_tier_log_likelihood(
    responses: ResponseMatrix,
    params: MirtParams,
    n_general: int,
    n_quad: int | None = None,
    bound: float = 6.0,
) -> float:
    """The marginal log-likelihood of ``responses`` under the two-tier model ``params``
    whose first ``n_general`` factors are the general ones (the rest specific, each
    item on at most one), on ``n_quad`` points per dimension on [−bound, bound] (R
    mirt's default for G + 1 dimensions when None): equal to
    ``irt.mirt_estep.mirt_log_likelihood`` with the same points, at a fraction of the
    cost."""
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("the responses and the parameters must list the same items in order")
    layout = TwoTierLayout.from_params(params, n_general)
    grid = two_tier_grid(layout, n_quad, bound)
    return e_step(Patterns.of(responses), params, layout, grid, counts=False).loglik
