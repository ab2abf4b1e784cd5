"""Scoring θ with known item parameters, written once for every item family: EAP on a
structure's grid or on a grid centred on each subject's mode, MAP and ML by safeguarded
Fisher scoring, and Warm's weighted likelihood estimate.

A family takes part by describing each row's (a subject's, or a distinct response
pattern's) log-likelihood as a function of its own θ: a ``SubjectLikelihood``. The
estimators below never look at the items, so a binary pool, a graded pool with nominal
items or any future family is scored by the same code, and a fix to the search reaches
them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Self

import numpy as np

from irt.structures import Grid
from irt.types import BoolArray, FloatArray, IntArray

__all__ = [
    "NormalPrior",
    "SubjectLikelihood",
    "WarmLikelihood",
    "eap_around_mode",
    "eap_on_grid",
    "grid_mode",
    "mode_sd",
    "posterior_mode",
    "posterior_moments",
    "warm_function",
    "weighted_likelihood",
]

_NEWTON_STEPS = 50
_NEWTON_TOL = 1e-8
_HALVINGS = 20


class SubjectLikelihood(Protocol):
    """Each row's log-likelihood of its own answers, ℓ_r(θ), with its slope and
    curvature; ``theta`` holds one θ per row."""

    def at_nodes(self, nodes: FloatArray) -> FloatArray:
        """ℓ_r at every one of the common ``nodes`` (K,): (R, K)."""
        ...

    def at(self, theta: FloatArray) -> FloatArray:
        """ℓ_r(θ_r) for every row: (R,)."""
        ...

    def score_information(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """ℓ_r'(θ_r) and an information (−ℓ_r'' or its expectation) for every row."""
        ...

    def rows(self, index: IntArray) -> Self:
        """The same likelihood of rows ``index`` only (the search drops the rows that
        have settled: on a long test each evaluation costs a pass over every answer)."""
        ...


class WarmLikelihood(SubjectLikelihood, Protocol):
    """A likelihood whose Fisher information I(θ) and J(θ) = Σ P'P''/(PQ) are known, as
    Warm's (1989) bias correction needs."""

    def warm_terms(self, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """S(θ), I(θ) and J(θ) for every row."""
        ...


@dataclass(frozen=True)
class NormalPrior:
    """θ ~ N(mean, sd²)."""

    mean: float = 0.0
    sd: float = 1.0

    def log_density(self, theta: FloatArray) -> FloatArray:
        """log density up to a constant."""
        return np.asarray(-0.5 * ((theta - self.mean) / self.sd) ** 2, dtype=np.float64)

    @property
    def precision(self) -> float:
        return float(1.0 / self.sd**2)


def posterior_moments(posterior: FloatArray, points: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The mean and SD of each row of ``posterior`` (R, Q) over ``points``, (Q,) for one
    θ or (Q, D) for several: EAP scores and their posterior SDs, (R,) or (R, D)."""
    mean = posterior @ points
    sd = np.sqrt(np.maximum(posterior @ points**2 - mean**2, 0.0))
    return mean, sd


def eap_on_grid(loglik: FloatArray, grid: Grid) -> tuple[FloatArray, FloatArray]:
    """EAP and posterior SD of every row from its log-likelihood at the grid's nodes
    (R, Q), overwritten; (R,) for one θ, else (R, D)."""
    post = grid.posterior([loglik]).blocks[0]
    points = grid.points[:, 0] if grid.points.shape[1] == 1 else grid.points
    return posterior_moments(post, points)


def grid_mode(
    likelihood: SubjectLikelihood,
    bounds: tuple[float, float],
    prior: NormalPrior | None,
    spacing: float = 0.05,
) -> FloatArray:
    """Each row's best point of an evenly spaced grid over ``bounds``: a start in the
    basin of the global mode, which Newton steps from θ = 0 can miss."""
    nodes = np.arange(bounds[0], bounds[1] + 1e-9, spacing)
    joint = likelihood.at_nodes(nodes)
    if prior is not None:
        joint += prior.log_density(nodes)
    return np.asarray(nodes[joint.argmax(axis=1)], dtype=np.float64)


def _objective(
    likelihood: SubjectLikelihood, theta: FloatArray, prior: NormalPrior | None
) -> FloatArray:
    value = likelihood.at(theta)
    return value + prior.log_density(theta) if prior is not None else value


def _score_information(
    likelihood: SubjectLikelihood, theta: FloatArray, prior: NormalPrior | None
) -> tuple[FloatArray, FloatArray]:
    score, info = likelihood.score_information(theta)
    if prior is None:
        return score, info
    return score - (theta - prior.mean) * prior.precision, info + prior.precision


def posterior_mode(
    likelihood: SubjectLikelihood,
    start: FloatArray,
    bounds: tuple[float, float],
    prior: NormalPrior | None,
) -> FloatArray:
    """The mode of each row's log posterior (its log-likelihood when ``prior`` is None),
    inside ``bounds``: Fisher scoring steps of at most 1, each halved until the objective
    does not fall (where the information is not positive, a step of 0.25 uphill)."""
    theta = np.clip(start.astype(np.float64), *bounds)
    value = _objective(likelihood, theta, prior)
    # Rows still moving. A row that did not move has reached a fixed point of the steps
    # below (the same θ gives the same step), so dropping it changes no result.
    active = np.arange(theta.size)
    part = likelihood
    for _ in range(_NEWTON_STEPS):
        at, now = theta[active], value[active]
        score, info = _score_information(part, at, prior)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = np.where(info > 0, score / info, 0.25 * np.sign(score))
        step = np.clip(newton, -1.0, 1.0)
        moved = np.zeros_like(at)
        # A row whose full step is below the tolerance has converged: halving it would
        # only chase rounding in its objective.
        pending = np.flatnonzero(np.abs(step) >= _NEWTON_TOL)
        for _ in range(_HALVINGS):
            if not pending.size:
                break
            trial = np.clip(at[pending] + step[pending], *bounds)
            subset = part if pending.size == at.size else part.rows(pending)
            trial_value = _objective(subset, trial, prior)
            ok = trial_value >= now[pending]
            rows = pending[ok]
            moved[rows] = trial[ok] - at[rows]
            at[rows], now[rows] = trial[ok], trial_value[ok]
            pending = pending[~ok]
            step[pending] *= 0.5
        theta[active], value[active] = at, now
        if np.abs(moved).max(initial=0.0) < _NEWTON_TOL:
            break
        still = np.flatnonzero(moved != 0)
        part = part if still.size == active.size else part.rows(still)
        active = active[still]
    return theta


def mode_sd(
    likelihood: SubjectLikelihood, theta: FloatArray, prior: NormalPrior | None
) -> FloatArray:
    """1/√information at ``theta`` (the prior's precision added when given): the SD of
    the normal approximation at a mode; NaN where the information is not positive."""
    info = _score_information(likelihood, theta, prior)[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(info > 0, 1.0 / np.sqrt(info), np.nan)


def eap_around_mode(
    likelihood: SubjectLikelihood,
    mode: FloatArray,
    bounds: tuple[float, float],
    prior: NormalPrior,
) -> tuple[FloatArray, FloatArray]:
    """Posterior mean and SD by quadrature on a grid centred on each row's mode.

    A fixed grid is too coarse for a subject who answered thousands of items (posterior
    SD ≈ 0.02); 41 points spanning ±6 Laplace SDs integrate any such bell to near machine
    precision, and stay inside ``bounds``.
    """
    _, info = _score_information(likelihood, mode, prior)
    sd = 1.0 / np.sqrt(np.maximum(info, prior.precision))
    offsets = np.linspace(-6.0, 6.0, 41)
    nodes = np.clip(mode[:, None] + sd[:, None] * offsets, *bounds)  # (R, K)
    log_w = np.empty_like(nodes)
    for k in range(nodes.shape[1]):
        log_w[:, k] = _objective(likelihood, nodes[:, k], prior)
    # Nodes squeezed together at a bound carry less width: weight by node spacing.
    log_w += np.log(np.maximum(np.gradient(nodes, axis=1), 1e-300))
    log_w -= log_w.max(axis=1, keepdims=True)
    w = np.exp(log_w)
    w /= w.sum(axis=1, keepdims=True)
    mean = (w * nodes).sum(axis=1)
    var = (w * (nodes - mean[:, None]) ** 2).sum(axis=1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def warm_function(likelihood: WarmLikelihood, theta: FloatArray) -> FloatArray:
    """S(θ) + J(θ) / (2 I(θ)): zero at Warm's weighted likelihood estimate."""
    score, info, bias = likelihood.warm_terms(theta)
    return np.asarray(score + bias / (2 * np.maximum(info, 1e-12)), dtype=np.float64)


def weighted_likelihood(
    likelihood: WarmLikelihood, near: FloatArray, bounds: tuple[float, float]
) -> tuple[FloatArray, BoolArray]:
    """Warm's weighted likelihood estimate: the root of ``warm_function`` where it falls
    through zero nearest ``near`` on a 241-point grid, refined by bisection. Returns the
    estimate and whether a root exists."""
    grid = np.linspace(bounds[0], bounds[1], 241)
    values = np.stack([warm_function(likelihood, np.full(near.size, g)) for g in grid], 1)
    falls = (values[:, :-1] > 0) & (values[:, 1:] <= 0)
    found = falls.any(axis=1)
    distance = np.abs(grid[:-1][None, :] - near[:, None])
    idx = np.where(falls, distance, np.inf).argmin(axis=1)
    lo, hi = grid[idx].copy(), grid[idx + 1].copy()
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        positive = warm_function(likelihood, mid) > 0
        lo = np.where(positive, mid, lo)
        hi = np.where(positive, hi, mid)
    return 0.5 * (lo + hi), np.asarray(found, dtype=bool)
