"""Ability scoring of subjects with known item parameters: EAP, MAP, ML and WLE.

Every estimate stays inside ``bounds`` and is finite. ML (and WLE where it has no root)
does not exist for a subject whose answers all agree; such subjects get the MAP estimate
instead and are flagged in ``Abilities.fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.estep import DesignMatrices, subject_log_likelihood
from irt.models import ItemParams, log_probabilities, theta_derivatives
from irt.names import AbilityMethod as AbilityMethod
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray

_NEWTON_STEPS = 50
_NEWTON_TOL = 1e-8


@dataclass(frozen=True)
class Abilities:
    """θ and its standard error for each subject, with the method that produced it."""

    subject_ids: tuple[str, ...]
    theta: FloatArray
    se: FloatArray
    method: AbilityMethod
    n_answered: FloatArray
    fallback: BoolArray  # True where ML/WLE did not exist and MAP was used instead


@dataclass(frozen=True)
class _Data:
    right: FloatArray
    observed: FloatArray

    @classmethod
    def of(cls, responses: ResponseMatrix) -> _Data:
        return cls(
            right=(responses.values == 1).astype(np.float64),
            observed=responses.observed.astype(np.float64),
        )


def score_abilities(
    responses: ResponseMatrix,
    params: ItemParams,
    method: AbilityMethod | str = AbilityMethod.EAP,
    *,
    bounds: tuple[float, float] = (-6.0, 6.0),
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> Abilities:
    """Estimate θ for every subject of ``responses`` (items must match ``params``)."""
    kind = AbilityMethod(method.lower() if isinstance(method, str) else method)
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("responses and item parameters must list the same items in order")
    lo, hi = bounds
    if not lo < hi:
        raise IRTError(f"bounds must be increasing, got {bounds}")
    if not prior_sd > 0:
        raise IRTError(f"prior_sd must be positive, got {prior_sd}")
    data = _Data.of(responses)
    prior = (prior_mean, prior_sd)
    start = _grid_mode(responses, params, bounds, prior)
    theta_map = _newton(data, params, start, bounds, prior)
    n_answered = data.observed.sum(axis=1)
    fallback = np.zeros(len(start), dtype=bool)
    if kind is AbilityMethod.EAP:
        theta, se = _eap(data, params, theta_map, bounds, prior)
    elif kind is AbilityMethod.MAP:
        theta = theta_map
        se = 1.0 / np.sqrt(_information(data, params, theta) + 1.0 / prior_sd**2)
    else:
        n_right = data.right.sum(axis=1)
        mixed = (n_right > 0) & (n_right < n_answered)
        if kind is AbilityMethod.ML:
            ml_start = _grid_mode(responses, params, bounds, None)
            theta = np.where(mixed, _newton(data, params, ml_start, bounds, None), theta_map)
        else:
            theta, found = _wle(data, params, theta_map, bounds)
            mixed = found
            theta = np.where(found, theta, theta_map)
        fallback = ~mixed
        info = _information(data, params, theta)
        se = np.where(
            fallback,
            1.0 / np.sqrt(info + 1.0 / prior_sd**2),
            1.0 / np.sqrt(np.maximum(info, 1e-12)),
        )
    return Abilities(
        subject_ids=responses.subject_ids,
        theta=np.clip(theta, lo, hi),
        se=np.asarray(se, dtype=np.float64),
        method=kind,
        n_answered=n_answered,
        fallback=fallback,
    )


def _grid_mode(
    responses: ResponseMatrix,
    params: ItemParams,
    bounds: tuple[float, float],
    prior: tuple[float, float] | None,
) -> FloatArray:
    """The best point of a 0.05-spaced grid: a start that is in the global mode's basin."""
    grid = np.arange(bounds[0], bounds[1] + 1e-9, 0.05)
    log_p, log_q = log_probabilities(grid, params)
    design = DesignMatrices.from_responses(responses)
    joint = subject_log_likelihood(design, log_p, log_q)
    if prior is not None:
        joint += -0.5 * ((grid - prior[0]) / prior[1]) ** 2
    return np.asarray(grid[joint.argmax(axis=1)], dtype=np.float64)


def _log_post(
    data: _Data, params: ItemParams, theta: FloatArray, prior: tuple[float, float] | None
) -> FloatArray:
    log_p, log_q = log_probabilities(theta, params)
    wrong = data.observed - data.right
    out = (data.right * log_p + wrong * log_q).sum(axis=1)
    if prior is not None:
        out += -0.5 * ((theta - prior[0]) / prior[1]) ** 2
    return np.asarray(out, dtype=np.float64)


def _score_info(
    data: _Data, params: ItemParams, theta: FloatArray
) -> tuple[FloatArray, FloatArray]:
    p, dp, _ = theta_derivatives(theta, params)
    pq = p * (1 - p)
    score = ((data.right - data.observed * p) * dp / pq).sum(axis=1)
    info = (data.observed * dp * dp / pq).sum(axis=1)
    return score, info


def _information(data: _Data, params: ItemParams, theta: FloatArray) -> FloatArray:
    return _score_info(data, params, theta)[1]


def _newton(
    data: _Data,
    params: ItemParams,
    start: FloatArray,
    bounds: tuple[float, float],
    prior: tuple[float, float] | None,
) -> FloatArray:
    """Fisher scoring with step halving on the log posterior (log-likelihood if no prior)."""
    theta = start.copy()
    value = _log_post(data, params, theta, prior)
    for _ in range(_NEWTON_STEPS):
        score, info = _score_info(data, params, theta)
        if prior is not None:
            score -= (theta - prior[0]) / prior[1] ** 2
            info += 1.0 / prior[1] ** 2
        step = np.clip(score / np.maximum(info, 1e-10), -1.0, 1.0)
        accepted = np.zeros(len(theta), dtype=bool)
        for _ in range(20):
            trial = np.clip(theta + step, *bounds)
            trial_value = _log_post(data, params, trial, prior)
            ok = (trial_value >= value) & ~accepted
            theta[ok], value[ok] = trial[ok], trial_value[ok]
            accepted |= ok
            if accepted.all():
                break
            step = np.where(accepted, step, 0.5 * step)
        if np.abs(np.where(accepted, step, 0.0)).max() < _NEWTON_TOL:
            break
    return theta


def _eap(
    data: _Data,
    params: ItemParams,
    mode: FloatArray,
    bounds: tuple[float, float],
    prior: tuple[float, float],
) -> tuple[FloatArray, FloatArray]:
    """Posterior mean and SD by quadrature on a grid centred on each subject's mode.

    A fixed grid is too coarse for a subject who answered thousands of items (posterior
    SD ≈ 0.02); 41 points spanning ±6 Laplace SDs integrate any such bell to near machine
    precision, and stay inside ``bounds``.
    """
    _, info = _score_info(data, params, mode)
    sd = 1.0 / np.sqrt(info + 1.0 / prior[1] ** 2)
    offsets = np.linspace(-6.0, 6.0, 41)
    nodes = np.clip(mode[:, None] + sd[:, None] * offsets, *bounds)  # (N, K)
    log_w = np.empty_like(nodes)
    for k in range(nodes.shape[1]):
        log_w[:, k] = _log_post(data, params, nodes[:, k], prior)
    # Nodes squeezed together at a bound carry less width: weight by node spacing.
    width = np.gradient(nodes, axis=1)
    log_w += np.log(np.maximum(width, 1e-300))
    log_w -= log_w.max(axis=1, keepdims=True)
    w = np.exp(log_w)
    w /= w.sum(axis=1, keepdims=True)
    mean = (w * nodes).sum(axis=1)
    var = (w * (nodes - mean[:, None]) ** 2).sum(axis=1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def _wle(
    data: _Data, params: ItemParams, start: FloatArray, bounds: tuple[float, float]
) -> tuple[FloatArray, BoolArray]:
    """Warm's weighted likelihood estimate: root of S(θ) + J(θ) / (2 I(θ)).

    The root is bracketed on a grid (the one nearest the MAP where the function falls
    through zero) and refined by bisection. Returns the estimate and whether it exists.
    """
    grid = np.linspace(bounds[0], bounds[1], 241)
    values = np.stack([_wle_function(data, params, np.full(len(start), g)) for g in grid], 1)
    falls = (values[:, :-1] > 0) & (values[:, 1:] <= 0)
    found = falls.any(axis=1)
    centre = np.abs(grid[:-1][None, :] - start[:, None])
    idx = np.where(falls, centre, np.inf).argmin(axis=1)
    lo, hi = grid[idx].copy(), grid[idx + 1].copy()
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        positive = _wle_function(data, params, mid) > 0
        lo = np.where(positive, mid, lo)
        hi = np.where(positive, hi, mid)
    return 0.5 * (lo + hi), np.asarray(found, dtype=bool)


def _wle_function(data: _Data, params: ItemParams, theta: FloatArray) -> FloatArray:
    p, dp, d2p = theta_derivatives(theta, params)
    pq = p * (1 - p)
    score = ((data.right - data.observed * p) * dp / pq).sum(axis=1)
    info = (data.observed * dp * dp / pq).sum(axis=1)
    bias = (data.observed * dp * d2p / pq).sum(axis=1)
    return np.asarray(score + bias / (2 * np.maximum(info, 1e-12)), dtype=np.float64)
