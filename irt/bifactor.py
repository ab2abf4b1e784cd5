"""The bifactor model (``irt.bifactor_model``) calibrated by EM with the bifactor
dimension reduction (``irt.bifactor_estep``) and Fisher-scoring M-steps
(``irt.bifactor_mstep``), SQUAREM-accelerated.

Defaults follow R mirt's ``bfactor``: 31 equally spaced points per dimension on [−6, 6]
with normal weights, no priors, stop when no parameter moves more than ``tol`` in a
cycle. ``guessing=True`` adds a lower asymptote per item (bifactor 3PL); ``priors``
(``BifactorPriors``) make the fit Bayes modal, which tens of subjects need.

Identification: the factors' scales are fixed at N(0, 1), so the model is identified up
to the sign of each factor; after the fit each factor's slopes are turned to a positive
sum.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np

from irt.bifactor_estep import (
    Answers,
    BifactorScores,
    bifactor_log_likelihood,
    bifactor_scores,
    e_step,
)
from irt.bifactor_model import (
    GENERAL_ONLY,
    BifactorParams,
    BifactorPriors,
    group_codes,
)
from irt.bifactor_mstep import GAMMA_BOUNDS, MAX_INTERCEPT, MAX_SLOPE, m_step
from irt.errors import ConvergenceWarning, IRTError
from irt.quadrature import normal_grid
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

__all__ = [
    "GENERAL_ONLY",
    "BifactorCalibrator",
    "BifactorParams",
    "BifactorPriors",
    "BifactorScores",
    "bifactor_log_likelihood",
    "bifactor_scores",
    "group_codes",
]

# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


class BifactorCalibrator:
    """Fit the bifactor 2PL (3PL with ``guessing``) by EM on a grid of ``n_quad``
    points per dimension on [−``bound``, ``bound``]; stop when no parameter moved more
    than ``tol`` in a cycle, or after ``max_iter`` cycles (with a ``ConvergenceWarning``).

    ``fit(responses, group)`` takes one group code per item (``group_codes``) and sets
    ``params_``, ``loglik_`` (marginal log-likelihood), ``logpost_`` (plus the log
    prior, with ``priors``), ``n_iter_``, ``converged_``, ``seconds_`` and
    ``n_parameters_``.
    """

    def __init__(
        self,
        n_quad: int = 31,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        scoring_steps: int = 3,
        priors: BifactorPriors | None = None,
        guessing: bool = False,
    ) -> None:
        if not tol > 0:
            raise IRTError(f"tol must be positive, got {tol}")
        if max_iter < 1 or scoring_steps < 1:
            raise IRTError("max_iter and scoring_steps must be at least 1")
        self.grid = normal_grid(n_quad, bound)
        self.tol = tol
        self.max_iter = max_iter
        self.scoring_steps = scoring_steps
        self.priors = priors
        self.guessing = guessing

    def fit(
        self,
        responses: ResponseMatrix,
        group: Sequence[int] | IntArray,
        groups: Sequence[str] | None = None,
    ) -> BifactorCalibrator:
        t0 = time.perf_counter()
        codes = np.asarray(group, dtype=np.int_)
        if codes.shape != (responses.n_items,):
            raise IRTError(f"give one group code per item ({responses.n_items}), got {codes.size}")
        n_groups = int(codes.max()) + 1 if codes.size and codes.max() >= 0 else 0
        names = tuple(groups) if groups is not None else tuple(str(k) for k in range(n_groups))
        if len(names) != n_groups:
            raise IRTError(f"{n_groups} groups coded but {len(names)} named")
        data = Answers.of(responses, codes, n_groups)
        params = _start(responses, codes, names, self.guessing)
        x, log_w = self.grid.points, self.grid.log_weights

        def em_cycle(current: BifactorParams) -> tuple[BifactorParams, float]:
            counts, loglik = e_step(data, current, x, log_w)
            new = m_step(current, counts, data, x, self.scoring_steps, self.priors)
            return new, loglik + (0.0 if self.priors is None else self.priors.log_density(current))

        converged = False
        n_iter = 0
        while n_iter < self.max_iter:
            # SQUAREM (Varadhan & Roland 2008): two EM cycles, an extrapolated point along
            # them, kept only if its log-likelihood is no lower than the second cycle's.
            first, _ = em_cycle(params)
            second, loglik = em_cycle(first)
            n_iter += 2
            r = _vector(first) - _vector(params)
            v = _vector(second) - _vector(first) - r
            new = second
            if np.any(v):
                alpha = -min(float(np.linalg.norm(r) / np.linalg.norm(v)), _MAX_EXTRAPOLATION)
                jump = _from_vector(params, _vector(params) - 2 * alpha * r + alpha**2 * v)
                landed, jump_loglik = em_cycle(jump)
                n_iter += 1
                if np.isfinite(jump_loglik) and jump_loglik >= loglik - 1e-9:
                    new = landed
            change = float(np.max(np.abs(_vector(new) - _vector(second))))
            change = max(change, float(np.max(np.abs(_vector(second) - _vector(first)))))
            params = new
            if change < self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(
                f"bifactor EM stopped after {self.max_iter} cycles without converging",
                ConvergenceWarning,
                stacklevel=2,
            )
        params = _oriented(params)
        _, self.loglik_ = e_step(data, params, self.grid.points, self.grid.log_weights)
        self.logpost_ = self.loglik_ + (
            0.0 if self.priors is None else self.priors.log_density(params)
        )
        self.params_ = params
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_parameters_ = int(
            (3 if self.guessing else 2) * params.n_items + np.sum(params.group >= 0)
        )
        self.seconds_ = time.perf_counter() - t0
        return self


def _start(
    responses: ResponseMatrix, codes: IntArray, names: tuple[str, ...], guessing: bool
) -> BifactorParams:
    p = np.clip(np.nan_to_num(_item_means(responses), nan=0.5), 0.02, 0.98)
    c = np.full(codes.size, 0.1) if guessing else None
    # In the 3PL the curve above c carries (p − c)/(1 − c) of the item's p-value.
    above = p if c is None else np.clip((p - c) / (1 - c), 0.02, 0.98)
    return BifactorParams(
        item_ids=tuple(responses.item_ids),
        a_general=np.full(codes.size, 1.0),
        a_specific=np.where(codes >= 0, 0.5, 0.0),
        d=np.log(above / (1 - above)) * 1.3,
        group=codes,
        groups=names,
        c=c,
    )


def _item_means(responses: ResponseMatrix) -> FloatArray:
    observed = responses.observed
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(((responses.values == 1) & observed).sum(axis=0) / observed.sum(axis=0))


def _vector(params: BifactorParams) -> FloatArray:
    """Every parameter in one vector (c as logit(c)), for SQUAREM and the stopping rule."""
    parts = [params.a_general, params.a_specific, params.d]
    if params.c is not None:
        parts.append(np.log(params.c / (1 - params.c)))
    return np.concatenate(parts)


def _from_vector(like: BifactorParams, values: FloatArray) -> BifactorParams:
    """Parameters from ``_vector``'s layout, within bounds, general-only items kept at a
    zero specific slope."""
    n = like.n_items
    a_g = np.clip(values[:n], -MAX_SLOPE, MAX_SLOPE)
    a_s = np.where(like.group >= 0, np.clip(values[n : 2 * n], -MAX_SLOPE, MAX_SLOPE), 0.0)
    d = np.clip(values[2 * n : 3 * n], -MAX_INTERCEPT, MAX_INTERCEPT)
    c = None
    if like.c is not None:
        c = 1.0 / (1.0 + np.exp(-np.clip(values[3 * n :], *GAMMA_BOUNDS)))
    return BifactorParams(like.item_ids, a_g, a_s, d, like.group, like.groups, c)


def _oriented(params: BifactorParams) -> BifactorParams:
    """Each factor's slopes turned to a positive sum (the likelihood is symmetric)."""
    a_g = params.a_general * (1.0 if params.a_general.sum() >= 0 else -1.0)
    a_s = params.a_specific.copy()
    for k in range(len(params.groups)):
        mine = params.group == k
        if a_s[mine].sum() < 0:
            a_s[mine] = -a_s[mine]
    return BifactorParams(
        params.item_ids, a_g, a_s, params.d, params.group, params.groups, params.c
    )
