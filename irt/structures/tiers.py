"""The Gibbons–Hedeker reduction (Gibbons & Hedeker 1992; Cai, Yang & Hansen 2011): general
factors G (one in the bifactor model, several, possibly correlated, in the two-tier
model) and specific factors S_1..S_K, each item on the general factors and at most one
S_k, the specifics independent of G and of each other. Given G the blocks are
independent, so

    L = Σ_g w_g Π_k [Σ_t w_t Π_{j ∈ k} P_j(y_j | G_g, S_t)] · Π_{j on G only} P_j(y_j | G_g),

one integral over (G, S) per block, however many blocks.

The blocks are the K specific blocks, whose items are evaluated on the local grid of
(general node g, specific point t), node t·Q_g + g (the specific point varies slowest,
so that sums and maxima over it run over whole rows of general nodes), and last the
items on G only, evaluated on the general grid. A specific block's posterior on the
local grid is the joint posterior of (G, S_k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from irt.quadrature import normal_grid
from irt.structures.base import LatentStructure, StructurePosterior
from irt.structures.grid import normal_log_weights
from irt.types import FloatArray, IntArray

__all__ = ["TieredGrid"]


@dataclass(frozen=True)
class TieredGrid(LatentStructure):
    """``n_specific`` specific blocks; the general nodes ``general`` (Q_g, D_g) with log
    weights ``general_log_w``; the specific axis ``specific`` (T,) with
    ``specific_log_w`` (normalised N(0, 1))."""

    n_specific: int
    general: FloatArray
    general_log_w: FloatArray
    specific: FloatArray
    specific_log_w: FloatArray

    @classmethod
    def bifactor(cls, n_specific: int, n_quad: int, bound: float) -> TieredGrid:
        """One general factor: R mirt's ``n_quad`` points on [−bound, bound] on both axes."""
        grid = normal_grid(n_quad, bound)
        points = grid.points[:, None]
        return cls(n_specific, points, grid.log_weights, grid.points, grid.log_weights)

    @classmethod
    def of(cls, n_specific: int, general: FloatArray, specific_axis: FloatArray) -> TieredGrid:
        """General nodes (Q_g, D_g) weighted N(0, I) and a specific axis weighted
        N(0, 1); ``correlated`` reweights the general nodes."""
        log_dens = -0.5 * specific_axis**2
        return cls(
            n_specific,
            general,
            normal_log_weights(general, np.eye(general.shape[1])),
            specific_axis,
            log_dens - np.logaddexp.reduce(log_dens),
        )

    @property
    def n_blocks(self) -> int:
        return self.n_specific + 1

    @property
    def n_general(self) -> int:
        return int(self.general.shape[0])

    @cached_property
    def local(self) -> FloatArray:
        """The local nodes of a specific block, (T·Q_g, D_g + 1): the general
        coordinates, then the specific one; node t·Q_g + g."""
        n_t = self.specific.size
        return np.column_stack(
            [np.tile(self.general, (n_t, 1)), np.repeat(self.specific, self.n_general)]
        )

    def correlated(self, correlation: FloatArray) -> TieredGrid:
        """The general nodes weighted by the N(0, ``correlation``) density."""
        return replace(self, general_log_w=normal_log_weights(self.general, correlation))

    def general_columns(self, table: FloatArray) -> FloatArray:
        """The columns of a (C, T·Q_g) table on the local grid at the first specific
        point: an item on G only does not depend on S, so these are its values on the
        general grid."""
        return table[:, : self.n_general]

    def posterior(
        self,
        logliks: Sequence[FloatArray],
        patterns: Sequence[IntArray | None] | None = None,
    ) -> StructurePosterior:
        """``logliks``: per specific block (R, T·Q_g) on the local grid, then the items
        on G only (R, Q_g). The blocks' posteriors come back in that order and shape.

        ``patterns``: per specific block, None or the row's answer pattern within the
        block, an index (R,) into that block's loglik, which then holds one row per
        pattern (U, T·Q_g): rows alike in a block share its integral over S. That
        block's posterior then comes back summed over the rows of each pattern
        (U, T·Q_g), which is all an E-step's expected counts need. On 1,525 subjects
        and four blocks of four items (about 60 patterns a block) this is most of a
        bifactor cycle's cost saved."""
        n_g, n_t = self.n_general, self.specific.size
        shared = list(patterns) if patterns is not None else [None] * (len(logliks) - 1)
        total = logliks[-1] + self.general_log_w  # (R, Q_g): log of the G integrand
        planes, masses = [], []
        for ll, pattern in zip(logliks[:-1], shared, strict=True):
            plane = ll.reshape(ll.shape[0], n_t, n_g)
            plane += self.specific_log_w[:, None]
            # w_t L_k(g, t) scaled by its largest value over t, so that the block's
            # integral over S at g neither underflows nor overflows.
            top = plane.max(axis=1)
            plane -= top[:, None, :]
            np.exp(plane, out=plane)
            mass = plane.sum(axis=1)
            log_mass = top + np.log(mass)
            total += log_mass if pattern is None else log_mass[pattern]
            planes.append(plane)
            masses.append(mass)
        high = total.max(axis=1, keepdims=True)
        post_g = np.exp(total - high)
        scale = post_g.sum(axis=1, keepdims=True)
        post_g /= scale
        blocks = []
        for plane, mass, pattern in zip(planes, masses, shared, strict=True):
            if pattern is None:
                on_g = post_g
            else:  # Σ over each pattern's rows of post(g)
                on_g = np.zeros_like(mass)
                np.add.at(on_g, pattern, post_g)
            plane *= (on_g / mass)[:, None, :]  # post(g) · w_t L_k(g, t) / L_k(g)
            blocks.append(plane.reshape(plane.shape[0], n_t * n_g))
        return StructurePosterior((high + np.log(scale))[:, 0], (*blocks, post_g))

    def spread(self, on_general: FloatArray) -> FloatArray:
        """Counts at the general nodes (C, Q_g) spread over the local grid (C, T·Q_g) in
        proportion to S's weights: an item on G only then has the same M-step objective
        on the local grid, with its specific slope fixed at 0."""
        weights = np.exp(self.specific_log_w)
        spread = weights[None, :, None] * on_general[:, None, :]
        return np.asarray(spread.reshape(on_general.shape[0], spread.shape[1] * spread.shape[2]))
