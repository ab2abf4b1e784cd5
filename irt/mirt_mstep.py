"""The M-step of the multidimensional 2PL/3PL: Fisher-scoring steps on each item's
expected complete-data log-likelihood (plus its log prior) over the product grid,
vectorised over the items, and the EM update of the factor correlations.

Each item's coordinates are (a_1..a_K, d[, γ = logit c]); a slope outside the loading
pattern keeps a zero step. The steps are the one driver's
(``irt.estimation.fisher_scoring``): a step that lowers an item's objective is halved
until it does not, so every cycle is a generalised EM step and the marginal log
posterior never falls (Dempster, Laird & Rubin 1977).

Factor correlations: the nodes stay fixed and only their weights w_q(R) depend on R,
so the latent part of the complete-data log-likelihood is Σ_q m_q log w_q(R) with m_q
the posterior mass at node q. ``correlation_step`` maximises it exactly over
correlation matrices, parametrised as R = L Lᵀ with each row of the lower-triangular L
scaled to unit length (any positive-definite correlation matrix, no constraint to
watch). ``expanded_step`` is the parameter-expanded alternative (Liu, Rubin & Wu
1998): R = D^{-1/2} Σ D^{-1/2} with Σ the posterior covariance, the slopes rescaled by
D^{1/2}. It converges much faster where the correlation is weakly determined, but on a
fixed grid the rescaling moves the nodes, so on the coarse grids of 4–5 factors (9 or 7
points, whose normalised weights have a variance of 0.86–0.99 rather than 1) its fixed
point is not the maximum of the quadrature likelihood we report. ``irt.mirt_em`` runs
the expanded step first and finishes with the exact one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from irt.bifactor_mstep import GAMMA_BOUNDS, MAX_INTERCEPT, MAX_SLOPE
from irt.errors import IRTError
from irt.estimation.fisher_scoring import Safeguards, fisher_scoring
from irt.families.coordinates import sigmoid
from irt.mirt_estep import Expected, log_weights
from irt.mirt_model import MirtParams
from irt.priors import beta_log_kernel, check_normal_beta
from irt.types import BoolArray, FloatArray, IntArray

__all__ = [
    "GAMMA_BOUNDS",
    "MAX_INTERCEPT",
    "MAX_SLOPE",
    "MirtPriors",
    "correlation_from_angles",
    "correlation_step",
    "expanded_step",
    "m_step",
]

_PROB_EPS = 1e-12
# The expanded step keeps the correlation matrix's smallest eigenvalue at least this
# large: at a boundary solution (correlation → ±1) it would otherwise turn singular.
_MIN_EIGENVALUE = 1e-4


@dataclass(frozen=True)
class MirtPriors:
    """Normal priors on the free slopes and on the intercepts, and a Beta prior on the
    lower asymptote in the 3PL: a Bayes-modal fit, for data with few subjects. With a
    zero mean the slope prior N(0, s²I) on an item's slope row is invariant under
    orthogonal rotation, so it does not favour one exploratory solution over another."""

    slope_mean: float = 0.0
    slope_sd: float = 1.5
    d_sd: float = 3.0
    # c ~ Beta(c_alpha, c_beta): mode (α − 1)/(α + β − 2) = 0.125.
    c_alpha: float = 3.0
    c_beta: float = 15.0

    def __post_init__(self) -> None:
        check_normal_beta(self, ("slope_sd", "d_sd"), "the prior's")
        if not np.isfinite(self.slope_mean):
            raise IRTError(f"the prior's slope_mean must be finite, got {self.slope_mean}")

    def center_and_precision(self, n_factors: int) -> tuple[FloatArray, FloatArray]:
        """Prior means and precisions of (a_1..a_K, d)."""
        center = np.append(np.full(n_factors, self.slope_mean), 0.0)
        sds = np.append(np.full(n_factors, self.slope_sd), self.d_sd)
        return center, sds**-2.0

    def log_density(self, params: MirtParams) -> float:
        """The log prior of ``params`` (up to a constant), free slopes only."""
        free = np.asarray(params.pattern, dtype=bool)
        out = -0.5 * float(
            np.sum(((params.slopes[free] - self.slope_mean) / self.slope_sd) ** 2)
            + np.sum((params.d / self.d_sd) ** 2)
        )
        if params.c is not None:
            out += float(np.sum(beta_log_kernel(params.c, self.c_alpha, self.c_beta)))
        return out


def m_step(
    params: MirtParams,
    expected: Expected,
    points: FloatArray,
    steps: int,
    priors: MirtPriors | None = None,
) -> MirtParams:
    """``steps`` safeguarded Fisher-scoring steps per item from ``params``
    (``irt.estimation.fisher_scoring``; the correlation is left as it is:
    ``correlation_step``)."""
    k = params.n_factors
    psi = np.hstack([params.slopes, params.d[:, None]])  # (J, K + 1)
    free = np.hstack([np.asarray(params.pattern, dtype=bool), np.ones((params.n_items, 1), bool)])
    if params.c is not None:
        psi = np.hstack([psi, np.log(params.c / (1 - params.c))[:, None]])
        free = np.hstack([free, np.ones((params.n_items, 1), bool)])
    center, precision = (
        priors.center_and_precision(k) if priors is not None else (np.zeros(k + 1), np.zeros(k + 1))
    )
    cols = np.vstack([points.T, np.ones(points.shape[0])])  # (K + 1, Q)
    problem = _OnCounts(
        cols, expected.n, expected.r, free, center, precision, priors, params.c is not None
    )
    # tol 0: every item takes every step.
    psi = fisher_scoring(problem, psi, steps, 0.0, _SAFEGUARDS)
    return MirtParams(
        item_ids=params.item_ids,
        slopes=np.where(params.pattern, psi[:, :k], 0.0),
        d=psi[:, k].copy(),
        factors=params.factors,
        correlation=params.correlation,
        pattern=params.pattern,
        structure=params.structure,
        c=sigmoid(psi[:, k + 1]) if params.c is not None else None,
    )


#: Eight halvings, and a trial whose objective is lower only by rounding is taken.
_SAFEGUARDS = Safeguards(tries=9, slack=1e-10)


@dataclass(frozen=True)
class _OnCounts:
    """The M-step of multidimensional 2PL/3PL items on their expected counts ``n`` and
    ``r`` (J, Q): the ``irt.estimation.fisher_scoring.ItemObjective`` of the items, in
    ψ = (a_1..a_K, d[, γ = logit c]); ``cols`` (K + 1, Q) is the design at the nodes,
    ``free`` (J, K + 1 [+ 1]) the coordinates that move, ``center`` and ``precision``
    the normal priors' of (a, d)."""

    cols: FloatArray
    n: FloatArray
    r: FloatArray
    free: BoolArray
    center: FloatArray
    precision: FloatArray
    priors: MirtPriors | None
    guessing: bool

    def rows(self, items: IntArray) -> _OnCounts:
        return replace(self, n=self.n[items], r=self.r[items], free=self.free[items])

    def _split(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The slopes and intercept (J, K + 1), and c (J, 1) (zeros without guessing)."""
        k1 = self.cols.shape[0]
        c = sigmoid(psi[:, k1:]) if self.guessing else np.zeros((psi.shape[0], 1))
        return psi[:, :k1], c

    def objective(self, psi: FloatArray) -> FloatArray:
        """Each item's expected complete-data log-likelihood plus its log prior (J,)."""
        theta, c = self._split(psi)
        prob = np.clip(c + (1 - c) * sigmoid(theta @ self.cols), _PROB_EPS, 1 - _PROB_EPS)
        out = np.sum(self.r * np.log(prob) + (self.n - self.r) * np.log1p(-prob), axis=1)
        out -= 0.5 * np.sum((theta - self.center) ** 2 * self.precision, axis=1)
        if self.guessing and self.priors is not None:
            out += beta_log_kernel(c[:, 0], self.priors.c_alpha, self.priors.c_beta)
        return np.asarray(out)

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The gradient and the expected information; fixed coordinates get a zero
        gradient and a unit row."""
        theta, c = self._split(psi)
        n, r, cols = self.n, self.r, self.cols
        sigma = sigmoid(theta @ cols)  # (J, Q)
        prob = np.clip(c + (1 - c) * sigma, _PROB_EPS, 1 - _PROB_EPS)
        rows = [((1 - c) * sigma * (1 - sigma))[:, None, :] * cols[None, :, :]]  # dP/dθ
        if self.guessing:
            rows.append(((1 - sigma) * c * (1 - c))[:, None, :])  # dP/dγ
        h = np.concatenate(rows, axis=1)  # (J, P, Q)
        spread = prob * (1 - prob)
        grad = np.einsum("jq,jaq->ja", (r - n * prob) / spread, h)
        info = np.matmul(h * (n / spread)[:, None, :], h.transpose(0, 2, 1))
        n_theta = theta.shape[1]
        grad[:, :n_theta] -= (theta - self.center) * self.precision
        info[:, np.arange(n_theta), np.arange(n_theta)] += self.precision
        if self.guessing and self.priors is not None:
            c1 = c[:, 0]
            al, be = self.priors.c_alpha, self.priors.c_beta
            grad[:, -1] += (al - 1) * (1 - c1) - (be - 1) * c1
            info[:, -1, -1] += (al + be - 2) * c1 * (1 - c1)
        free = self.free
        grad = np.where(free, grad, 0.0)
        eye = np.eye(free.shape[1])[None]
        info = np.where(free[:, :, None] & free[:, None, :], info, eye)
        return grad, info

    def clip(self, psi: FloatArray) -> FloatArray:
        """Slopes within ±``MAX_SLOPE``, the intercept within ±``MAX_INTERCEPT``, γ
        within ``GAMMA_BOUNDS``."""
        k1 = self.cols.shape[0]
        out = np.clip(psi, -MAX_SLOPE, MAX_SLOPE)
        out[:, k1 - 1] = np.clip(psi[:, k1 - 1], -MAX_INTERCEPT, MAX_INTERCEPT)
        if self.guessing:
            out[:, k1] = np.clip(psi[:, k1], *GAMMA_BOUNDS)
        return out


def angles_from_correlation(correlation: FloatArray) -> FloatArray:
    """The free entries (row by row, below the diagonal) of the Cholesky factor with
    each row divided by its diagonal entry: ``correlation_from_angles``'s inverse."""
    chol = np.linalg.cholesky(correlation)
    scaled = chol / np.diag(chol)[:, None]
    return np.asarray(scaled[np.tril_indices_from(scaled, k=-1)])


def correlation_from_angles(angles: FloatArray, n_factors: int) -> FloatArray:
    """R = L Lᵀ, L lower triangular with unit diagonal before each row is scaled to unit
    length: every vector of ``angles`` gives a positive-definite correlation matrix."""
    lower = np.eye(n_factors)
    lower[np.tril_indices(n_factors, k=-1)] = angles
    lower /= np.linalg.norm(lower, axis=1, keepdims=True)
    corr = lower @ lower.T
    corr = 0.5 * (corr + corr.T)
    np.fill_diagonal(corr, 1.0)
    return corr


def correlation_step(correlation: FloatArray, mass: FloatArray, points: FloatArray) -> FloatArray:
    """The R maximising Σ_q m_q log w_q(R) (the latent part of the expected complete-data
    log-likelihood, ``mass`` m_q at the nodes ``points``), from ``correlation``."""
    k = correlation.shape[0]
    total = float(mass.sum())
    moment = (points * (mass / total)[:, None]).T @ points  # Σ_q m_q θ_q θ_qᵀ / Σ m
    rows, cols = np.tril_indices(k, k=-1)

    def negative(angles: FloatArray) -> tuple[float, FloatArray]:
        lower = np.eye(k)
        lower[rows, cols] = angles
        norms = np.linalg.norm(lower, axis=1, keepdims=True)
        unit = lower / norms
        corr = unit @ unit.T
        log_w = log_weights(points, corr)
        value = float(mass @ log_w) / total
        prior_moment = (points * np.exp(log_w)[:, None]).T @ points
        inv = np.linalg.inv(corr)
        grad_r = 0.5 * inv @ (moment - prior_moment) @ inv  # ∂/∂R, R's entries taken apart
        grad_unit = 2.0 * grad_r @ unit
        # Through the row scaling l = v/|v|: ∂/∂v = (I − l lᵀ) ∂/∂l / |v|.
        grad_lower = (grad_unit - unit * np.sum(unit * grad_unit, axis=1, keepdims=True)) / norms
        return -value, -grad_lower[rows, cols]

    start = angles_from_correlation(correlation)
    from scipy.optimize import minimize  # 0.5 s to import: only fits that need it pay

    result = minimize(negative, start, jac=True, method="BFGS", options={"gtol": 1e-10})
    best = result.x if -result.fun >= -negative(start)[0] else start
    return correlation_from_angles(np.asarray(best, dtype=np.float64), k)


def expanded_step(
    params: MirtParams, mass: FloatArray, points: FloatArray, correlated: bool
) -> MirtParams:
    """The parameter-expanded reduction (Liu, Rubin & Wu 1998) after an item M-step: the
    latent mean μ and covariance Σ, free in the expanded model, take the posterior's
    values (``mass`` at ``points``; Σ diagonal unless ``correlated``, which keeps R = I),
    and the model is reduced back to N(0, R) by θ = μ + D^{1/2}θ*: d ← d + a·μ,
    a ← a·D^{1/2}, R = D^{-1/2} Σ D^{-1/2}. Zero slopes stay zero, so the pattern and the
    exploratory triangle survive; with zero posterior means and unit variances it
    changes nothing."""
    w = mass / mass.sum()
    mean = w @ points
    cov = (points * w[:, None]).T @ points - np.outer(mean, mean)
    if not correlated:
        cov = np.diag(np.diag(cov))
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    corr = 0.5 * (corr + corr.T)
    np.fill_diagonal(corr, 1.0)
    low = float(np.min(np.linalg.eigvalsh(corr)))
    if low < _MIN_EIGENVALUE:
        shrink = (_MIN_EIGENVALUE - low) / (1.0 - low)
        corr = (1.0 - shrink) * corr + shrink * np.eye(corr.shape[0])
    return replace(
        params,
        slopes=np.where(params.pattern, np.clip(params.slopes * sd, -MAX_SLOPE, MAX_SLOPE), 0.0),
        d=np.clip(params.d + params.slopes @ mean, -MAX_INTERCEPT, MAX_INTERCEPT),
        correlation=corr if correlated else params.correlation,
    )
