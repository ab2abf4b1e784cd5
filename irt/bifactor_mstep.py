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
information). In the 3PL the observed information differs (``_newton_step``), and is
used where it is positive definite.

The 3PL's objective is not concave, and for an item that (nearly) nobody answers right
the quadratic model can send a step across the optimum: each step is therefore halved
until the item's objective does not fall, which makes every EM cycle a generalised EM
step (Dempster, Laird & Rubin 1977) that cannot lower the log posterior.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from irt.bifactor_estep import Answers, Counts, block_coefficients, block_design
from irt.bifactor_model import BifactorParams, BifactorPriors
from irt.families.coordinates import log_sigmoid
from irt.priors import beta_log_kernel
from irt.types import BoolArray, FloatArray, IntArray

# Slopes stay within ±MAX_SLOPE, intercepts within ±MAX_INTERCEPT and c within
# [sigmoid(GAMMA_BOUNDS[0]), sigmoid(GAMMA_BOUNDS[1])] (1e-4 .. 0.9): an item that
# everyone answers alike would otherwise run off to infinity.
MAX_SLOPE = 20.0
MAX_INTERCEPT = 30.0
GAMMA_BOUNDS = (-9.2, 2.2)

# A scoring step moves no coordinate further than this: far from the optimum the
# quadratic model can overshoot.
_MAX_STEP = 2.0
# Halvings of a step that lowers an item's objective before the item stays put.
_MAX_HALVINGS = 8
# An item whose Newton step moves no coordinate further than _SETTLED, or would raise
# its objective by less than _SETTLED_GAIN, has reached its M-step optimum for all
# practical purposes (EM's own tolerance is far coarser).
_SETTLED = 1e-5
_SETTLED_GAIN = 1e-9


def m_step(
    params: BifactorParams,
    counts: Counts,
    data: Answers,
    x: FloatArray,
    steps: int,
    priors: BifactorPriors | None = None,
) -> BifactorParams:
    """Up to ``steps`` safeguarded Newton steps per item from ``params``."""
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
        block = _Block(design, _pairs(design), n, r, (n - r) @ design.T, center, precision, priors)
        theta, g = _maximise(
            block,
            _bounded(block_coefficients(params, items, specific)),
            None if gamma is None else gamma[items],
            steps,
        )
        a_g[items] = theta[:, 0]
        if specific:
            a_s[items] = theta[:, 1]
        d[items] = theta[:, -1]
        if gamma is not None and g is not None:
            gamma[items] = g
    c = None if gamma is None else 1.0 / (1.0 + np.exp(-gamma))
    return BifactorParams(params.item_ids, a_g, a_s, d, params.group, params.groups, c)


@dataclass(frozen=True)
class _Block:
    """One block's M-step problem: ``design`` (P, M) over the M grid points kept,
    ``pairs`` its row products, expected answers ``n`` (J or 1, M) and right answers
    ``r`` (J, M), ``wrong_design`` = (n − r)·designᵀ (J, P), the priors' centres and
    precisions for the P coordinates, and the priors (for c)."""

    design: FloatArray
    pairs: FloatArray
    n: FloatArray
    r: FloatArray
    wrong_design: FloatArray
    center: FloatArray
    precision: FloatArray
    priors: BifactorPriors | None

    def subset(self, rows: IntArray) -> _Block:
        n = self.n if self.n.shape[0] == 1 else self.n[rows]
        return _Block(
            self.design,
            self.pairs,
            n,
            self.r[rows],
            self.wrong_design[rows],
            self.center,
            self.precision,
            self.priors,
        )


def _maximise(
    block: _Block, theta: FloatArray, gamma: FloatArray | None, steps: int
) -> tuple[FloatArray, FloatArray | None]:
    """Up to ``steps`` safeguarded Newton steps for each item of ``block``. An item stops
    once its step moves no coordinate more than ``_SETTLED`` or promises (to second
    order) less than ``_SETTLED_GAIN`` of objective: along a flat ridge the second
    happens first, and further steps there would buy nothing."""
    theta = theta.copy()
    gamma = None if gamma is None else gamma.copy()
    n_theta = theta.shape[1]
    objective, sigma = _evaluate(block, theta, gamma)
    active = np.arange(theta.shape[0])
    for _ in range(steps):
        part = block.subset(active) if active.size < theta.shape[0] else block
        step, gain = _newton_step(
            part, theta[active], None if gamma is None else gamma[active], sigma[active]
        )
        moving = (np.max(np.abs(step), axis=1) > _SETTLED) & (gain > _SETTLED_GAIN)
        active, step = active[moving], step[moving]
        if not active.size:
            break
        todo, todo_step = active, step
        for _ in range(_MAX_HALVINGS + 1):
            part = block.subset(todo) if todo.size < theta.shape[0] else block
            new_theta = _bounded(theta[todo] + todo_step[:, :n_theta])
            new_gamma = None
            if gamma is not None:
                new_gamma = np.clip(gamma[todo] + todo_step[:, -1], *GAMMA_BOUNDS)
            new_objective, new_sigma = _evaluate(part, new_theta, new_gamma)
            old = objective[todo]
            ok = new_objective >= old - 1e-12 * np.abs(old)
            took = todo[ok]
            theta[took] = new_theta[ok]
            if gamma is not None and new_gamma is not None:
                gamma[took] = new_gamma[ok]
            objective[took] = new_objective[ok]
            sigma[took] = new_sigma[ok]
            todo, todo_step = todo[~ok], 0.5 * todo_step[~ok]
            if not todo.size:
                break
    return theta, gamma


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


def _newton_step(
    block: _Block, theta: FloatArray, gamma: FloatArray | None, sigma: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The Newton step (J, P[+1]) on the log posterior for the items of a block at
    ``theta`` (J, P) and ``gamma`` (J,) logit(c) or None, given σ(z) at the grid points,
    each capped so that no coordinate moves more than ``_MAX_STEP``, and its predicted
    gain gradient·step.

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
    info += 1e-8 * np.eye(info.shape[1])[None]
    step = np.linalg.solve(info, grad[..., None])[..., 0]
    longest = np.max(np.abs(step), axis=1, keepdims=True)
    step *= np.minimum(1.0, _MAX_STEP / np.maximum(longest, 1e-12))
    return np.asarray(step), np.asarray(np.sum(grad * step, axis=1))


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
