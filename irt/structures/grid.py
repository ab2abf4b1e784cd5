"""A product grid over the latent traits: one θ on R mirt's 61 equally spaced points, or
correlated factors θ ~ N(0, R) on the product of an axis per factor. Every item is
evaluated at every node, so the whole likelihood is one block."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.structures.base import LatentStructure, StructurePosterior, normalised
from irt.types import FloatArray

__all__ = ["Grid", "normal_log_weights"]


@dataclass(frozen=True)
class Grid(LatentStructure):
    """Nodes ``points`` (Q, D) with log weights ``log_weights`` (Q,) summing to 1."""

    points: FloatArray
    log_weights: FloatArray

    def __post_init__(self) -> None:
        if self.points.ndim != 2 or self.points.shape[0] != self.log_weights.shape[0]:
            raise IRTError("a grid needs points (Q, D) and log weights (Q,)")

    @classmethod
    def of(cls, points: FloatArray, log_weights: FloatArray) -> Grid:
        """From 1-D points (one θ) or (Q, D) nodes and their log weights."""
        return cls(np.asarray(points, dtype=np.float64).reshape(len(log_weights), -1), log_weights)

    @property
    def n_blocks(self) -> int:
        return 1

    def correlated(self, correlation: FloatArray) -> Grid:
        """The same nodes weighted by the N(0, ``correlation``) density."""
        return Grid(self.points, normal_log_weights(self.points, correlation))

    def posterior(self, logliks: Sequence[FloatArray]) -> StructurePosterior:
        """The sum of the given log-likelihoods (all items see every node) plus the log
        weights, normalised per row."""
        joint = logliks[0]
        for more in logliks[1:]:
            joint += more
        joint += self.log_weights
        log_marginal, post = normalised(joint)
        return StructurePosterior(log_marginal, (post,))


def normal_log_weights(points: FloatArray, correlation: FloatArray) -> FloatArray:
    """log w_q: the N(0, R) density at the nodes (Q, D), normalised to sum 1."""
    solved = np.linalg.solve(correlation, points.T)  # (D, Q)
    log_dens = -0.5 * np.einsum("qk,kq->q", points, solved)
    return np.asarray(log_dens - np.logaddexp.reduce(log_dens))
