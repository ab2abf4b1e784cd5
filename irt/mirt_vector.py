"""The free parameters of a multidimensional model (``irt.mirt_model.MirtParams``) as
one vector and back, EM on that vector for the one loop of ``irt.estimation.em_loop``
(``MirtVectorEM``: a latent structure adds its E-step and M-step), the largest
parameter change that stops EM, and the sign convention the calibrators report in.

The vector holds the free slopes, the intercepts, logit(c) when the model has lower
asymptotes, and, when the first ``n_correlated`` factors' correlations are free, their
angles (``irt.mirt_mstep.correlation_from_angles``: any vector is a valid correlation
matrix, so an extrapolated point never leaves the parameter space). Shared by
``irt.mirt_em`` (all factors correlated or none) and ``irt.two_tier`` (the general
block only).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

import numpy as np

from irt.mirt_estep import Patterns
from irt.mirt_model import MirtParams
from irt.mirt_mstep import (
    GAMMA_BOUNDS,
    MAX_INTERCEPT,
    MAX_SLOPE,
    MirtPriors,
    angles_from_correlation,
    correlation_from_angles,
)
from irt.mirt_polytomous import MirtPolytomousParams
from irt.types import FloatArray


def free_vector(params: MirtParams, n_correlated: int = 0) -> FloatArray:
    """The free parameters in one vector; ``n_correlated`` leading factors whose
    correlations are free (0 or 1: none)."""
    parts = [params.slopes[params.pattern], params.d]
    if params.c is not None:
        parts.append(np.log(params.c / (1 - params.c)))
    if n_correlated > 1:
        g = n_correlated
        parts.append(angles_from_correlation(params.correlation[:g, :g]))
    return np.concatenate(parts)


def from_free_vector(like: MirtParams, values: FloatArray, n_correlated: int = 0) -> MirtParams:
    """``like`` with the parameters of ``free_vector``'s layout, within bounds; the
    correlations outside the first ``n_correlated`` factors stay as ``like`` has them."""
    n_free, n = int(np.count_nonzero(like.pattern)), like.n_items
    slopes = np.zeros_like(like.slopes)
    slopes[like.pattern] = np.clip(values[:n_free], -MAX_SLOPE, MAX_SLOPE)
    at = n_free + n
    d = np.clip(values[n_free:at], -MAX_INTERCEPT, MAX_INTERCEPT)
    c = None
    if like.c is not None:
        c = 1.0 / (1.0 + np.exp(-np.clip(values[at : at + n], *GAMMA_BOUNDS)))
        at += n
    corr = like.correlation
    if n_correlated > 1:
        g = n_correlated
        corr = like.correlation.copy()
        corr[:g, :g] = correlation_from_angles(values[at:], g)
    return replace(like, slopes=slopes, d=d, c=c, correlation=corr)


def max_change(a: MirtParams, b: MirtParams) -> float:
    """The largest absolute change of a slope, intercept, logit(c) or correlation."""
    parts = [np.abs(a.slopes - b.slopes).ravel(), np.abs(a.d - b.d)]
    if a.c is not None and b.c is not None:
        parts.append(np.abs(np.log(a.c / (1 - a.c)) - np.log(b.c / (1 - b.c))))
    parts.append(np.abs(a.correlation - b.correlation).ravel())
    return float(np.max(np.concatenate(parts)))


#: A multidimensional pool: binary items or mirt's polytomous ones.
Pool = TypeVar("Pool", MirtParams, MirtPolytomousParams)


def oriented(params: Pool) -> Pool:
    """Each factor turned so that its slopes sum to a positive number (the likelihood is
    symmetric); its correlations turn with it."""
    sign = np.where(params.slopes.sum(axis=0) < 0, -1.0, 1.0)
    return replace(
        params,
        slopes=params.slopes * sign,
        correlation=params.correlation * np.outer(sign, sign),
    )


class _Expected(Protocol):
    @property
    def loglik(self) -> float: ...


T = TypeVar("T", bound=_Expected)


@dataclass(frozen=True)
class MirtEvaluation(Generic[T]):
    """An E-step at a point of the vector: the parameters there, the latent structure's
    expected counts (with the marginal log-likelihood) and the log posterior."""

    params: MirtParams
    expected: T
    logpost: float

    @property
    def loglik(self) -> float:
        return self.expected.loglik


@dataclass(frozen=True)
class MirtVectorEM(Generic[T]):
    """EM on ``free_vector`` (an ``irt.estimation.em_loop.EMProblem``): the vector of
    ``like``'s free parameters (and the first ``n_correlated`` factors' correlations),
    its clip into bounds, the log prior and the stopping rule's measure
    (``max_change``: slopes, d, logit c, correlations) are here; a latent structure
    supplies ``e_step`` and ``m_step`` (``scoring_steps`` Fisher-scoring steps per item)
    on the parameters, for the response patterns ``data``."""

    like: MirtParams
    n_correlated: int
    priors: MirtPriors | None
    data: Patterns
    scoring_steps: int

    def e_step(self, params: MirtParams) -> T:
        """The expected counts under ``params`` and their marginal log-likelihood."""
        raise NotImplementedError

    def m_step(self, params: MirtParams, expected: T) -> MirtParams:
        """The next parameters from ``params`` and the E-step under them."""
        raise NotImplementedError

    def params(self, x: FloatArray) -> MirtParams:
        return from_free_vector(self.like, x, self.n_correlated)

    def vector(self, params: MirtParams) -> FloatArray:
        return free_vector(params, self.n_correlated)

    def log_prior(self, params: MirtParams) -> float:
        return 0.0 if self.priors is None else self.priors.log_density(params)

    def evaluate(self, x: FloatArray) -> MirtEvaluation[T]:
        params = self.params(x)
        expected = self.e_step(params)
        return MirtEvaluation(params, expected, expected.loglik + self.log_prior(params))

    def update(self, x: FloatArray, evaluation: MirtEvaluation[T]) -> FloatArray:
        return self.vector(self.m_step(evaluation.params, evaluation.expected))

    def clip(self, x: FloatArray) -> FloatArray:
        return self.vector(self.params(x))

    def change(self, new: FloatArray, old: FloatArray) -> float:
        return max_change(self.params(new), self.params(old))

    def loglik(self, params: MirtParams) -> float:
        """The marginal log-likelihood at ``params``."""
        return self.e_step(params).loglik

    def fitted(self, x: FloatArray) -> tuple[MirtParams, float, float]:
        """The parameters at the end of EM, oriented (``oriented``), with their
        log-likelihood and log posterior."""
        params = oriented(self.params(x))
        loglik = self.loglik(params)
        return params, loglik, loglik + self.log_prior(params)

    def n_parameters(self) -> int:
        """The free parameters: slopes, intercepts, lower asymptotes, correlations."""
        like, g = self.like, self.n_correlated
        per_item = 1 if like.c is None else 2
        return int(np.count_nonzero(like.pattern)) + per_item * like.n_items + g * (g - 1) // 2
