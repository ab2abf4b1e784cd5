"""Quadrature grids for the latent ability distribution (N(0, 1) unless told)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.types import FloatArray


@dataclass(frozen=True)
class QuadratureGrid:
    """Points θ_q with log weights log w_q (Σ w_q = 1)."""

    points: FloatArray
    log_weights: FloatArray

    def __post_init__(self) -> None:
        if self.points.shape != self.log_weights.shape or self.points.ndim != 1:
            raise IRTError("quadrature points and weights must be 1-D arrays of equal length")

    @property
    def size(self) -> int:
        return int(self.points.shape[0])

    @property
    def weights(self) -> FloatArray:
        return np.asarray(np.exp(self.log_weights), dtype=np.float64)


def normal_grid(n_points: int = 61, bound: float = 6.0) -> QuadratureGrid:
    """Equally spaced points on [−bound, bound] weighted by the N(0, 1) density.

    61 points on [−6, 6] is R mirt's default for one dimension, so our marginal
    log-likelihoods are directly comparable with its ``logLik``.
    """
    if n_points < 5:
        raise IRTError(f"a quadrature grid needs at least 5 points, got {n_points}")
    if not bound > 0:
        raise IRTError(f"quadrature bound must be positive, got {bound}")
    return normal_on(np.linspace(-bound, bound, n_points))


def normal_on(points: FloatArray, mean: float = 0.0, sd: float = 1.0) -> QuadratureGrid:
    """Fixed points weighted by the N(mean, sd²) density (a latent distribution whose
    moments are estimated, as in fixed-anchor calibration, keeps its points)."""
    log_dens = -0.5 * ((points - mean) / sd) ** 2
    return QuadratureGrid(points=points, log_weights=log_dens - np.logaddexp.reduce(log_dens))


def prior_grid(n_points: int, bound: float, mean: float, sd: float) -> QuadratureGrid:
    """``normal_grid``'s points, checked as there, weighted by an EAP scorer's N(mean,
    sd²) prior."""
    if not sd > 0:
        raise IRTError(f"prior_sd must be positive, got {sd}")
    return normal_on(normal_grid(n_points, bound).points, mean, sd)
