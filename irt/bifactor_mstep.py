"""The bifactor model's M-step: Newton steps on each item's expected complete-data log
posterior (log-likelihood plus log prior) over the grid points that hold posterior
mass, vectorised over the items of a block. In the 3PL the lower asymptote is fitted
as γ = logit(c).

Every sum over grid points is a matrix product with the block's design [G; S; 1] (or
with its pairwise products for the information), so a step costs a handful of passes
over the (items × support) counts. With P = c + (1 − c)σ(z) and e = (r − n·P)/P the
score and the expected (Fisher) information per grid point are

    ∂ℓ/∂z = e·σ,                        ∂ℓ/∂γ = e·c,
    I_zz = n(1 − c)σ²(1 − σ)/P,   I_zγ = n·c(1 − c)σ(1 − σ)/P,   I_γγ = n·c²(1 − c)(1 − σ)/P

(the 2PL is c = 0: ∂ℓ/∂z = r − nσ, I_zz = nσ(1 − σ), which is also the observed
information). In the 3PL the observed information differs (``_score_information``), and is
used where it is positive definite.

The 3PL's objective is not concave, and for an item that (nearly) nobody answers right
the quadratic model can send a step across the optimum: each step is therefore halved
until the item's objective does not fall (the one driver, ``irt.estimation.fisher_scoring``),
which makes every EM cycle a generalised EM step (Dempster, Laird & Rubin 1977) that
cannot lower the log posterior.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from irt.bifactor_estep import Answers, Counts, block_coefficients, block_design
from irt.bifactor_model import BifactorParams, BifactorPriors
from irt.estimation.fisher_scoring import Safeguards, fisher_scoring
from irt.families.coordinates import log_sigmoid
from irt.priors import beta_log_kernel
from irt.types import BoolArray, FloatArray, IntArray

# Slopes stay within ±MAX_SLOPE, intercepts within ±MAX_INTERCEPT and c within
# [sigmoid(GAMMA_BOUNDS[0]), sigmoid(GAMMA_BOUNDS[1])] (1e-4 .. 0.9): an item that
# everyone answers alike would otherwise run off to infinity.
MAX_SLOPE = 20.0
MAX_INTERCEPT = 30.0
GAMMA_BOUNDS = (-9.2, 2.2)


def m_step(
    params: BifactorParams,
    counts: Counts,
    data: Answers,
    x: FloatArray,
    steps: int,
    priors: BifactorPriors | None = None,
) -> BifactorParams:
    """Up to ``steps`` safeguarded Newton steps per item from ``params``
    (``irt.estimation.fisher_scoring``)."""
    a_g, a_s, d = params.a_general.copy(), params.a_specific.copy(), params.d.copy()
    gamma = None if params.c is None else np.log(params.c / (1 - params.c))
    for k, items in enumerate(data.items):
        if not items.size:
            continue
        specific = k < data.n_blocks - 1
        design = block_design(x, specific)[:, counts.support[k]]
        n, r = counts.n[k], counts.r[k]
        center, precision = (
            priors.center_and_precision(specific)
            if priors is not None
            else (np.zeros(design.shape[0]), np.zeros(design.shape[0]))
        )
        block = _Block(
            design,
            _pairs(design),
            n,
            r,
            (n - r) @ design.T,
            center,
            precision,
            priors,
            gamma is not None,
        )
        psi = _bounded(block_coefficients(params, items, specific))
        if gamma is not None:
            psi = np.hstack([psi, gamma[items, None]])
        # tol 0: an item is done only when its next step is settled (``_SAFEGUARDS``).
        psi = fisher_scoring(block, psi, steps, 0.0, _SAFEGUARDS)
        n_theta = design.shape[0]
        a_g[items] = psi[:, 0]
        if specific:
            a_s[items] = psi[:, 1]
        d[items] = psi[:, n_theta - 1]
        if gamma is not None:
            gamma[items] = psi[:, n_theta]
    c = None if gamma is None else 1.0 / (1.0 + np.exp(-gamma))
    return BifactorParams(params.item_ids, a_g, a_s, d, params.group, params.groups, c)


@dataclass(frozen=True)
class _Block:
    """One block's M-step problem, the ``irt.estimation.fisher_scoring.ItemObjective``
    of its items in ψ = (θ, [γ]) with θ the P coefficients of the design: ``design``
    (P, M) over the M grid points kept, ``pairs`` its row products, expected answers
    ``n`` (J or 1, M) and right answers ``r`` (J, M), ``wrong_design`` = (n − r)·designᵀ
    (J, P), the priors' centres and precisions for the P coordinates, the priors (for
    c), and whether the items have a lower asymptote (``guessing``, γ = logit c last)."""

    design: FloatArray
    pairs: FloatArray
    n: FloatArray
    r: FloatArray
    wrong_design: FloatArray
    center: FloatArray
    precision: FloatArray
    priors: BifactorPriors | None
    guessing: bool

    def rows(self, items: IntArray) -> _Block:
        n = self.n if self.n.shape[0] == 1 else self.n[items]
        return replace(self, n=n, r=self.r[items], wrong_design=self.wrong_design[items])

    def _split(self, psi: FloatArray) -> tuple[FloatArray, FloatArray | None]:
        n_theta = self.design.shape[0]
        return psi[:, :n_theta], psi[:, n_theta] if self.guessing else None

    def objective(self, psi: FloatArray) -> FloatArray:
        return _evaluate(self, *self._split(psi))[0]

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        theta, gamma = self._split(psi)
        # σ(z) alone: the objective there is the driver's already.
        sigma = np.exp(log_sigmoid(theta @ self.design))
        return _score_information(self, theta, gamma, sigma)

    def clip(self, psi: FloatArray) -> FloatArray:
        out = psi.copy()
        n_theta = self.design.shape[0]
        out[:, :n_theta] = _bounded(psi[:, :n_theta])
        if self.guessing:
            out[:, n_theta] = np.clip(psi[:, n_theta], *GAMMA_BOUNDS)
        return out


#: Eight halvings, a trial whose objective is lower only by rounding taken, and an item
#: done once its next step moves no coordinate further than 1e-5 or would raise its
#: objective by less than 1e-9: it has reached its M-step optimum for all practical
#: purposes (EM's own tolerance is far coarser).
_SAFEGUARDS = Safeguards(tries=9, slack=1e-12, settled=1e-5, min_gain=1e-9)


def _bounded(theta: FloatArray) -> FloatArray:
    """Slopes (all columns but the last) within ±MAX_SLOPE, intercepts within
    ±MAX_INTERCEPT."""
    out = np.clip(theta, -MAX_SLOPE, MAX_SLOPE)
    out[:, -1] = np.clip(theta[:, -1], -MAX_INTERCEPT, MAX_INTERCEPT)
    return out


def _evaluate(
    block: _Block, theta: FloatArray, gamma: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    """Each item's expected complete-data log posterior (up to a constant) and σ(z) at
    the grid points. With ℓ = log σ(z): log P = ℓ and log(1 − P) = ℓ − z in the 2PL,
    log(1 − P) = log(1 − c) + ℓ − z in the 3PL; Σ (n − r)·z is ``wrong_design``·θ."""
    z = theta @ block.design
    log_sig = log_sigmoid(z)
    sigma = np.exp(log_sig)
    n, r = block.n, block.r
    if n.shape[0] == 1:
        value = (log_sig @ n[0]) - np.sum(block.wrong_design * theta, axis=1)
    else:
        value = np.sum(n * log_sig, axis=1) - np.sum(block.wrong_design * theta, axis=1)
    if gamma is not None:
        c = 1.0 / (1.0 + np.exp(-gamma))
        log_p = np.log(c[:, None] + (1 - c[:, None]) * sigma)
        # Right answers: log P replaces the ℓ counted above; wrong ones add log(1 − c).
        value += np.sum(r * (log_p - log_sig), axis=1)
        value += np.log1p(-c) * np.sum(n - r, axis=1)
    value -= 0.5 * np.sum(block.precision * (theta - block.center) ** 2, axis=1)
    if gamma is not None and block.priors is not None:
        value += beta_log_kernel(c, block.priors.c_alpha, block.priors.c_beta)
    return np.asarray(value), np.asarray(sigma)


@cache
def _triangle(size: int) -> tuple[IntArray, IntArray]:
    rows, cols = np.triu_indices(size)
    return rows, cols


def _pairs(design: FloatArray) -> FloatArray:
    """The design's pairwise row products (upper triangle, ``np.triu_indices`` order)."""
    rows, cols = _triangle(design.shape[0])
    return np.asarray(design[rows] * design[cols])


def _symmetric(flat: FloatArray, size: int) -> FloatArray:
    """(J, size, size) from (J, T) upper-triangle entries."""
    rows, cols = _triangle(size)
    out = np.empty((flat.shape[0], size, size))
    out[:, rows, cols] = flat
    out[:, cols, rows] = flat
    return out


def _score_information(
    block: _Block, theta: FloatArray, gamma: FloatArray | None, sigma: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The gradient (J, P[+1]) and information (J, P[+1], P[+1]) of the log posterior
    for the items of a block at ``theta`` (J, P) and ``gamma`` (J,) logit(c) or None,
    given σ(z) at the grid points.

    In the 2PL the observed and the expected (Fisher) information coincide. In the 3PL
    they do not, and along the (d, c) ridge of an item few subjects answer right the
    Fisher information overstates the curvature a hundredfold, so that scoring crawls;
    the observed information (with the prior's) is used wherever it is positive
    definite, Fisher's elsewhere."""
    n_theta = theta.shape[1]
    design, n, r = block.design, block.n, block.r
    tail = 1.0 - sigma
    c = None if gamma is None else 1.0 / (1.0 + np.exp(-gamma))
    if c is None:
        grad = (r - n * sigma) @ design.T
        info = _symmetric((n * sigma * tail) @ block.pairs.T, n_theta)
        _add_prior(block, grad, info, theta, c)
    else:
        inv_p = 1.0 / (c[:, None] + (1.0 - c[:, None]) * sigma)
        e = r * inv_p - n  # (r − n·P)/P
        slope = sigma * tail  # σ(1 − σ)
        grad = np.concatenate([(e * sigma) @ design.T, (c * np.sum(e, axis=1))[:, None]], axis=1)
        # Observed: −∂²ℓ, with the r/P² terms and the e terms that Fisher drops.
        right_w = r * inv_p**2 * slope
        info = _guessing_information(
            block,
            (
                right_w * sigma - (e * slope) / (1 - c[:, None]),
                right_w,
                np.sum(r * inv_p**2 * tail, axis=1) * c - np.sum(e, axis=1),
            ),
            c,
        )
        _add_prior(block, grad, info, theta, c)
        bad = np.flatnonzero(~_positive_definite(info))
        if bad.size:
            # Fisher: −E[∂²ℓ] per grid point, r replaced by its expectation n·P.
            n_bad = n if n.shape[0] == 1 else n[bad]
            fisher_w = n_bad * inv_p[bad] * slope[bad]
            fisher = _guessing_information(
                block,
                (
                    fisher_w * sigma[bad],
                    fisher_w,
                    np.sum(n_bad * inv_p[bad] * tail[bad], 1) * c[bad],
                ),
                c[bad],
            )
            _add_prior(block, None, fisher, theta[bad], c[bad])
            info[bad] = fisher
    return grad, info


def _add_prior(
    block: _Block,
    grad: FloatArray | None,
    info: FloatArray,
    theta: FloatArray,
    c: FloatArray | None,
) -> None:
    """The log prior's gradient and negative Hessian, in place: normal on θ, and for
    γ = logit c under c ~ Beta(α, β) gradient (α − 1)(1 − c) − (β − 1)c, curvature
    (α + β − 2)c(1 − c)."""
    n_theta = theta.shape[1]
    if grad is not None:
        grad[:, :n_theta] -= (theta - block.center) * block.precision
    info[:, np.arange(n_theta), np.arange(n_theta)] += block.precision
    priors = block.priors
    if c is not None and priors is not None:
        if grad is not None:
            grad[:, -1] += (priors.c_alpha - 1) * (1 - c) - (priors.c_beta - 1) * c
        info[:, -1, -1] += (priors.c_alpha + priors.c_beta - 2) * c * (1 - c)


def _guessing_information(
    block: _Block, parts: tuple[FloatArray, FloatArray, FloatArray], c: FloatArray
) -> FloatArray:
    """(J, P+1, P+1) information of (θ, γ) in the 3PL from per-grid-point weights:
    ``parts`` = (u, v, t) with I_zz = (1 − c)·u, I_zγ = c(1 − c)·v per grid point and
    I_γγ = c(1 − c)·t summed."""
    u, v, t = parts
    n_theta = block.design.shape[0]
    info = np.empty((c.size, n_theta + 1, n_theta + 1))
    info[:, :n_theta, :n_theta] = _symmetric(u @ block.pairs.T, n_theta) * (1 - c)[:, None, None]
    cross = (v @ block.design.T) * (c * (1 - c))[:, None]
    info[:, :n_theta, -1] = cross
    info[:, -1, :n_theta] = cross
    info[:, -1, -1] = c * (1 - c) * t
    return info


def _positive_definite(info: FloatArray) -> BoolArray:
    """Which of the (J, K, K) symmetric blocks are positive definite: one batched
    Cholesky when all are (the usual case), else Sylvester's leading minors."""
    try:
        np.linalg.cholesky(info)
        return np.ones(info.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        size = info.shape[1]
        minors = [np.linalg.det(info[:, :k, :k]) for k in range(1, size + 1)]
        return np.asarray(np.all(np.stack(minors) > 0, axis=0))
