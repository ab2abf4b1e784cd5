"""The E-step of the polytomous EM (Bock & Aitkin 1981) and the marginal log-likelihood
of a pool of mixed items on one θ ~ N(0, 1).

Identical response patterns (missing cells included) are collapsed and weighted by
their counts. Each pattern is a row of 0/1 indicators over all (item, score) pairs, so
the log-likelihood of every pattern at every node is one matrix product with the
(pairs × nodes) table of log P_jk(θ_q); the expected counts
r_jkq = Σ_p n_p 1[y_pj = k] post_pq are a second one. The grid is R mirt's: ``n_quad``
(61) equally spaced points on [−``bound``, ``bound``] weighted by the N(0, 1) density
normalised to sum 1, so the log-likelihood is mirt's ``logLik``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irt.estimation.arrays import empty
from irt.polytomous import PolytomousParams, curves
from irt.polytomous_layout import Layout, Natural, Patterns, check_match, naturals_of
from irt.polytomous_responses import PolytomousResponses
from irt.quadrature import normal_grid
from irt.structures import Grid
from irt.types import FloatArray

__all__ = ["EStep", "e_step", "log_table", "polytomous_log_likelihood"]


@dataclass(frozen=True)
class EStep:
    """The log-likelihood, expected counts and posteriors of one E-step."""

    loglik: float
    counts: FloatArray  # (C, Q): expected subjects with each (item, score) at each node
    posterior: FloatArray  # (P, Q), rows sum to 1


def log_table(layout: Layout, naturals: Sequence[Natural], theta: FloatArray) -> FloatArray:
    """log P_jk(θ_q) for every (item, score) pair, (C, Q) (numpy, or torch on the device
    of a torch ``theta`` and ``naturals``)."""
    n_nodes = theta.shape[0]
    table = empty((layout.n_columns, n_nodes), theta)
    for g, (a, d, c, ak) in zip(layout.groups, naturals, strict=True):
        log_p = curves(g.kind, theta, a, d, c, ak=ak).log_p  # (Q, J_g, K)
        table[g.cols.ravel()] = log_p.reshape(n_nodes, -1).T
    return table  # type: ignore[no-any-return]


def e_step(patterns: Patterns, table: FloatArray, grid: Grid) -> EStep:
    """Posteriors of every pattern over the nodes of ``grid`` (one θ, or factors on a
    product grid) given the ``log_table``, and the expected counts of each (item, score)
    pair at each node."""
    post = grid.posterior([patterns.onehot @ table])
    counts = patterns.onehot.T @ (post.blocks[0] * patterns.counts[:, None])
    return EStep(post.loglik(patterns.counts), counts, post.blocks[0])


def polytomous_log_likelihood(
    responses: PolytomousResponses,
    params: PolytomousParams,
    n_quad: int = 61,
    bound: float = 6.0,
) -> float:
    """Σ_n log Σ_q w_q Π_j P_j(y_nj | θ_q) on the calibrator's grid: the quantity the fit
    maximises (without priors), to compare parameter sets on the same data."""
    check_match(responses, params)
    layout = Layout.of(params.item_types, params.n_categories)
    patterns = Patterns.of(responses.values, layout)
    grid = normal_grid(n_quad, bound)
    table = log_table(layout, naturals_of(params, layout), grid.points)
    return e_step(patterns, table, Grid.of(grid.points, grid.log_weights)).loglik
