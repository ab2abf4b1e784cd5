"""The continuous items of a mixed pool (``irt.continuous``: CRM and Beta scores in
[0, 1]) on the score table's θ grid.

A continuous score cannot be tabulated per score as a category is, but it need not be:
both models are exponential families in two statistics of the score (``irt.continuous``),

    log f(x | θ) = A(θ) + B(θ) t₁(x) + C(θ) t₂(x) − log(x(1 − x)),

so three rows per item, A, B and C on the grid, give an answer's exact log-likelihood
row from its two statistics: three multiply-adds per grid point, no approximation of
the score. The Kullback–Leibler divergence between two abilities' score densities has
a closed form for each model, used by KL selection.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_kernels import beta_shapes, clip_scores, coefficients, log_jacobian, statistics
from irt.types import FloatArray, IntArray


@dataclass(frozen=True)
class ContinuousRows:
    """``coef[0..2, j, g]`` = A, B, C of continuous item j at grid point g; the pool's
    positions of these items start at ``offset``."""

    params: ContinuousParams
    offset: int
    coef: FloatArray  # (3, Jc, G)

    @classmethod
    def build(cls, params: ContinuousParams, grid: FloatArray, offset: int) -> ContinuousRows:
        eta = params.a[:, None] * grid[None, :] + params.d[:, None]
        a_c, b_c, c_c = coefficients(params.is_crm[:, None], eta, params.dispersion[:, None])
        return cls(params, offset, np.stack([a_c, b_c, c_c]))

    @property
    def n_items(self) -> int:
        return self.params.n_items

    def log_density_rows(self, items: IntArray, scores: FloatArray) -> FloatArray:
        """log f(x | grid) of each (pool position, score) pair, (N, G)."""
        local = items - self.offset
        x = clip_scores(scores, self.params.epsilon)
        t1, t2 = statistics(self.params.is_crm[local], x)
        a_c, b_c, c_c = self.coef[:, local]
        return np.asarray(a_c + b_c * t1[:, None] + c_c * t2[:, None] + log_jacobian(x)[:, None])

    def locations(self) -> FloatArray:
        """Where each item's expected score is ½: η = 0, θ = −d/a (for the CRM too, whose
        E[σ(y)] is ½ at η = 0 by symmetry), (Jc,)."""
        return np.asarray(-self.params.d / self.params.a)

    def kl(self, theta: FloatArray, at: FloatArray) -> FloatArray:
        """KL(f(· | θ) ‖ f(· | at)) of every continuous item, (E, Jc): for the CRM two
        normals of one variance on the logit scale, a²(θ − at)²/(2σ²); for the Beta the
        divergence of Beta(m₀, n₀) from Beta(m, n)."""
        from scipy.special import betaln, digamma  # at first use: 0.4 s of start-up saved

        p = self.params
        eta0 = theta[:, None] * p.a + p.d
        eta = at[:, None] * p.a + p.d
        crm = p.is_crm
        sigma = np.where(crm, p.sigma, 1.0)
        normal = (eta0 - eta) ** 2 / (2 * sigma**2)
        tau = np.where(crm, 0.0, p.tau)
        m0, n0 = beta_shapes(np.where(crm, 0.0, eta0), tau)
        m, n = beta_shapes(np.where(crm, 0.0, eta), tau)
        beta = (
            betaln(m, n)
            - betaln(m0, n0)
            + (m0 - m) * digamma(m0)
            + (n0 - n) * digamma(n0)
            + (m - m0 + n - n0) * digamma(m0 + n0)
        )
        return np.asarray(np.where(crm, normal, np.maximum(beta, 0.0)))


def draw_continuous(
    params: ContinuousParams, theta: FloatArray, items: IntArray, rng: np.random.Generator
) -> FloatArray:
    """One score per (θ, item) pair (positions within ``params``) drawn from the item's
    model: σ(y), y ~ N(η, σ²), for the CRM; Beta(m, n) for the Beta
    (``ContinuousParams.draw``)."""
    return params.draw(theta, items, rng)
