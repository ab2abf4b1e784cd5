"""Standard errors of a continuous fit from the observed information of the marginal log
posterior in ψ = (log a, d, κ) (κ = log σ for CRM items, τ for Beta items).

The gradient is exact by Fisher's identity — the complete-data gradient of the M-step
at the E-step's own statistics — and central differences of that gradient give the
Hessian (Oakes 1999; R mirt's default ``SE.type``), covariances between items kept. The
errors of a and σ follow by the delta method (SE(a) = a SE(log a), SE(σ) = σ SE(log σ)).
It costs 2·3J E-steps of three matrix products each: about a second for 50 items and
2,000 subjects. The cross-product of per-subject scores would need one, but is noisy
in small samples and, unlike the observed information, assumes the model is right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_estep import EStep, ScoreData, check_match, e_step, params_internal
from irt.continuous_mstep import complete_gradient, stats_of
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.quadrature import normal_grid
from irt.types import BoolArray, FloatArray

__all__ = ["ContinuousStandardErrors", "MarginalLogPosterior", "continuous_standard_errors"]

# An information matrix with a larger condition number is inverted item by item.
_MAX_CONDITION = 1e12
# Relative step of the numerical Hessian.
_HESSIAN_STEP = 1e-5


@dataclass(frozen=True)
class ContinuousStandardErrors:
    """Standard errors (J,) of a, d, σ (NaN for Beta items) and τ (NaN for CRM items),
    and the observed information they invert over ψ in ``labels`` order (per item
    ``item.log_a``, ``item.d``, then ``item.log_sigma`` or ``item.tau``)."""

    a: FloatArray
    d: FloatArray
    sigma: FloatArray
    tau: FloatArray
    method: str
    information: FloatArray = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)


class MarginalLogPosterior:
    """The marginal log posterior of a fit as a function of ψ flattened item by item."""

    def __init__(
        self, data: ScoreData, theta: FloatArray, log_w: FloatArray, priors: ContinuousPriors
    ) -> None:
        self.data, self.theta, self.log_w, self.priors = data, theta, log_w, priors

    def step(self, flat: FloatArray) -> EStep:
        return e_step(self.data, flat.reshape(-1, 3), self.theta, self.log_w)

    def value(self, flat: FloatArray) -> float:
        psi = flat.reshape(-1, 3)
        prior = float(self.priors.log_density(psi, self.data.is_crm).sum())
        return self.step(flat).loglik + prior

    def gradient(self, flat: FloatArray) -> FloatArray:
        """Exact ∂/∂ψ by Fisher's identity, flattened."""
        psi = flat.reshape(-1, 3)
        est = self.step(flat)
        grad = complete_gradient(psi, stats_of(est), self.theta, self.data.is_crm, self.priors)
        return np.asarray(grad.ravel())

    def hessian(self, flat: FloatArray) -> FloatArray:
        """Central differences of the exact gradient, symmetrised."""
        n = flat.size
        hess = np.empty((n, n))
        steps = _HESSIAN_STEP * np.maximum(1.0, np.abs(flat))
        for i in range(n):
            up, down = flat.copy(), flat.copy()
            up[i] += steps[i]
            down[i] -= steps[i]
            hess[:, i] = (self.gradient(up) - self.gradient(down)) / (2 * steps[i])
        return np.asarray(0.5 * (hess + hess.T))


def _invert(info: FloatArray) -> FloatArray:
    """The whole information inverted, or where it is near-singular (a parameter at a
    bound) item by item, with NaN for blocks that stay singular."""
    if np.all(np.isfinite(info)) and np.linalg.cond(info) < _MAX_CONDITION:
        return np.asarray(np.linalg.inv(info))
    cov = np.full_like(info, np.nan)
    for at in range(0, len(info), 3):
        sl = slice(at, at + 3)
        block = info[sl, sl]
        if np.all(np.isfinite(block)) and np.linalg.cond(block) < _MAX_CONDITION:
            cov[sl, sl] = np.linalg.inv(block)
    return cov


def shape_errors(
    psi: FloatArray, is_crm: BoolArray, item_ids: Sequence[str], info: FloatArray, cov: FloatArray
) -> ContinuousStandardErrors:
    """The errors of a, d, σ and τ at ψ (J, 3) from the information over ψ and its
    inverse ``cov`` (delta method for a and σ)."""
    var = np.diag(cov).reshape(-1, 3)
    se = np.where(var > 0, np.sqrt(np.where(var > 0, var, 1.0)), np.nan)
    labels = []
    for item, crm in zip(item_ids, is_crm, strict=True):
        labels += [f"{item}.log_a", f"{item}.d", f"{item}.{'log_sigma' if crm else 'tau'}"]
    return ContinuousStandardErrors(
        a=np.exp(psi[:, 0]) * se[:, 0],
        d=se[:, 1],
        sigma=np.where(is_crm, np.exp(psi[:, 2]) * se[:, 2], np.nan),
        tau=np.where(is_crm, np.nan, se[:, 2]),
        method="oakes",
        information=info,
        labels=tuple(labels),
    )


def standard_errors_at(
    objective: MarginalLogPosterior, psi: FloatArray, item_ids: tuple[str, ...]
) -> ContinuousStandardErrors:
    """Standard errors at ψ (J, 3) from the observed information."""
    info = -objective.hessian(psi.ravel())
    return shape_errors(psi, objective.data.is_crm, item_ids, info, _invert(info))


def continuous_standard_errors(
    responses: ContinuousResponses,
    params: ContinuousParams,
    priors: ContinuousPriors | None = None,
    n_quad: int = 61,
    bound: float = 6.0,
) -> ContinuousStandardErrors:
    """Standard errors of ``params`` (normally a fit's, with its ``priors``; None is no
    priors) on ``responses``, scores clipped at ``params.epsilon``."""
    check_match(responses, params)
    grid = normal_grid(n_quad, bound)
    data = ScoreData.of(responses, params.is_crm, params.epsilon)
    objective = MarginalLogPosterior(
        data, grid.points, grid.log_weights, priors or ContinuousPriors()
    )
    return standard_errors_at(objective, params_internal(params), params.item_ids)
