"""E-steps of the multidimensional polytomous EM, in log space, and the marginal
log-likelihood of a ``MirtPolytomousParams`` pool.

Identical response patterns are collapsed and written as 0/1 indicator rows over all
(item, score) pairs (``irt.polytomous_layout.Patterns``), so the log-likelihood of every
pattern at every node is one product with the (pairs × nodes) table of log P_jk(θ_q).

- Full product grid (``irt.mirt_estep.product_grid``, R mirt's 31 points per dimension
  for two factors on [−6, 6], weights the N(0, R) density normalised to sum 1): the
  unidimensional E-step of ``irt.polytomous_estep`` runs unchanged on the grid's nodes.
- Bifactor (Gibbons & Hedeker 1992; Cai, Yang & Hansen 2011): given the general factor
  G the specific blocks are independent, so

      L_p = Σ_g w_g Π_s [Σ_t w_t Π_{j ∈ s} P_j(y_pj | G_g, S_t)] · Π_{j ∈ G only} P_j(y_pj | G_g),

  one (G, S) plane per block however many blocks there are. The expected counts of a
  block's items live on its plane: post_p(g, t) = post_p(g) · w_t L_ps(g, t)/L_ps(g). A
  general-only item's counts at G_g are spread over the plane in proportion to w_t, which
  leaves its M-step objective unchanged, so every item is fitted on the same (G, S)
  nodes with the local slopes (a_G, a_S) (a_S fixed at 0 for a general-only item).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.mirt_estep import log_weights, product_grid
from irt.mirt_polytomous import CategoryLayout, MirtPolytomousParams, group_curves
from irt.polytomous_estep import e_step
from irt.polytomous_layout import Patterns
from irt.polytomous_responses import PolytomousResponses
from irt.structures import Grid, TieredGrid
from irt.types import FloatArray, IntArray

__all__ = [
    "BifactorEStep",
    "Naturals",
    "bifactor_e_step",
    "bifactor_polytomous_log_likelihood",
    "mirt_polytomous_log_likelihood",
    "specific_of",
    "table_of",
]

#: A group's (slopes (J_g, D), d (J_g, m), ak (J_g, m) or None).
Naturals = tuple[FloatArray, FloatArray, FloatArray | None]


def table_of(
    layout: CategoryLayout, naturals: Sequence[Naturals], points: FloatArray
) -> FloatArray:
    """log P_jk(θ_q) for every (item, score) pair at the nodes ``points`` (Q, D), (C, Q)."""
    table = np.empty((layout.n_columns, points.shape[0]))
    for g, (a, d, ak) in zip(layout.groups, naturals, strict=True):
        log_p = group_curves(g.kind, points @ a.T, d, ak).log_p  # (Q, J_g, K)
        table[g.cols.ravel()] = log_p.reshape(points.shape[0], -1).T
    return table


def naturals_of(params: MirtPolytomousParams, layout: CategoryLayout) -> list[Naturals]:
    return [params.group_parameters(g) for g in layout.groups]


def check_data(responses: PolytomousResponses, params: MirtPolytomousParams) -> None:
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("the responses and the parameters must list the same items in order")
    over = np.flatnonzero(responses.values.max(axis=0) >= params.n_categories)
    if over.size:
        raise IRTError(f"item {params.item_ids[int(over[0])]!r} has a score beyond its categories")


def mirt_polytomous_log_likelihood(
    responses: PolytomousResponses,
    params: MirtPolytomousParams,
    n_quad: int | None = None,
    bound: float = 6.0,
) -> float:
    """Σ_n log Σ_q w_q(R) Π_j P_j(y_nj | θ_q) on the full product grid (``n_quad`` points
    per dimension, R mirt's default when None)."""
    check_data(responses, params)
    layout = params.layout()
    points = product_grid(params.n_factors, n_quad, bound)
    table = table_of(layout, naturals_of(params, layout), points)
    patterns = Patterns.of(responses.values, layout)
    return e_step(patterns, table, Grid(points, log_weights(points, params.correlation))).loglik


# --- bifactor ---------------------------------------------------------------------------


def specific_of(params: MirtPolytomousParams) -> IntArray:
    """Each item's specific factor (0-based among factors 2..D) or −1, read off a
    bifactor pattern: every item on the first (general) factor and at most one other,
    all factors uncorrelated."""
    pattern = params.pattern
    if not pattern[:, 0].all():
        raise IRTError("a bifactor model has every item on its first (general) factor")
    rest = pattern[:, 1:]
    if np.any(rest.sum(axis=1) > 1):
        raise IRTError("a bifactor item loads on at most one specific factor")
    if not np.allclose(params.correlation, np.eye(params.n_factors)):
        raise IRTError("the factors of a bifactor model are uncorrelated")
    return np.where(rest.any(axis=1), rest.argmax(axis=1), -1).astype(np.int_)


@dataclass(frozen=True)
class BifactorEStep:
    """The log-likelihood and the expected counts of every (item, score) pair on the
    (G, S) plane, (C, n²)."""

    loglik: float
    counts: FloatArray


def bifactor_e_step(
    patterns: Patterns,
    table: FloatArray,
    blocks: Sequence[IntArray],
    general_cols: IntArray,
    plane: TieredGrid,
) -> BifactorEStep:
    """The E-step from the ``table`` (C, n²) of log P on the (G, S) plane of ``plane``:
    ``blocks`` are the columns of each specific block's items, ``general_cols`` the
    general-only items', whose counts are spread over the plane
    (``TieredGrid.spread``) so that every item is fitted on the same nodes."""
    onehot, counts = patterns.onehot, patterns.counts
    logliks = [onehot[:, cols] @ table[cols] for cols in blocks]
    logliks.append(onehot[:, general_cols] @ plane.general_columns(table)[general_cols])
    post = plane.posterior(logliks)
    out = np.zeros((table.shape[0], table.shape[1]))
    for cols, block in zip(blocks, post.blocks[:-1], strict=True):
        block *= counts[:, None]
        out[cols] = onehot[:, cols].T @ block
    on_general = post.blocks[-1] * counts[:, None]
    out[general_cols] = plane.spread(onehot[:, general_cols].T @ on_general)
    return BifactorEStep(post.loglik(counts), out)


def bifactor_columns(
    layout: CategoryLayout, specific: IntArray, n_blocks: int
) -> tuple[list[IntArray], IntArray]:
    """The (item, score) columns of each block's items and of the general-only items."""
    n_cat = np.diff(np.append(layout.offsets, layout.n_columns))

    def cols(items: IntArray) -> IntArray:
        if items.size == 0:
            return np.zeros(0, dtype=np.int_)
        return np.concatenate([layout.offsets[j] + np.arange(n_cat[j]) for j in items])

    blocks = [cols(np.flatnonzero(specific == s)) for s in range(n_blocks)]
    return blocks, cols(np.flatnonzero(specific < 0))


def local_slopes(slopes: FloatArray, specific: IntArray) -> FloatArray:
    """(a_G, a_S) of every item, (J, 2); a_S = 0 for a general-only item."""
    rows = np.arange(slopes.shape[0])
    a_s = np.where(specific >= 0, slopes[rows, 1 + np.maximum(specific, 0)], 0.0)
    return np.column_stack([slopes[:, 0], a_s])


def bifactor_polytomous_log_likelihood(
    responses: PolytomousResponses,
    params: MirtPolytomousParams,
    n_quad: int = 31,
    bound: float = 6.0,
) -> float:
    """The marginal log-likelihood of a bifactor pool (``specific_of``) by dimension
    reduction, ``n_quad`` points per integrated dimension."""
    check_data(responses, params)
    specific = specific_of(params)
    layout = params.layout()
    plane = TieredGrid.bifactor(params.n_factors - 1, n_quad, bound)
    local = local_slopes(params.slopes, specific)
    naturals = [(local[g.items], *params.group_parameters(g)[1:]) for g in layout.groups]
    table = table_of(layout, naturals, plane.local)
    blocks, general = bifactor_columns(layout, specific, params.n_factors - 1)
    patterns = Patterns.of(responses.values, layout)
    return bifactor_e_step(patterns, table, blocks, general, plane).loglik
