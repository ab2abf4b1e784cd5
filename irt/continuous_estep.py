"""The E-step of the continuous EM (Bock & Aitkin 1981) and the marginal log-likelihood of
a pool of continuous items (``irt.continuous``) on one θ ~ N(0, 1).

Both item models are exponential families in two statistics (t₁, t₂) of the clipped
score, so the log-likelihood of subject n at node θ_q is

    Σ_j o_nj [A_jq + B_jq t₁_nj + C_jq t₂_nj − log(x_nj(1 − x_nj))]

(o_nj = 1 where the answer is present): three (N × J)(J × Q) matrix products. The
posterior-weighted sufficient statistics that the M-step needs — N_jq = Σ_n o_nj p_nq,
S1_jq = Σ_n t₁_nj p_nq, S2_jq = Σ_n t₂_nj p_nq — are three more. The grid is that of
the other calibrators (``irt.quadrature.normal_grid``: 61 points on [−6, 6]).

The EM works in the internal coordinates ψ = (log a, d, κ) per item, κ = log σ for a CRM
item and τ for a Beta item, each clipped to a wide box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_kernels import clip_scores, coefficients, log_jacobian, statistics
from irt.continuous_responses import ContinuousResponses
from irt.errors import IRTError
from irt.families.coordinates import LOG_SLOPE_BOUNDS
from irt.quadrature import normal_grid
from irt.structures import normalised
from irt.types import BoolArray, FloatArray

__all__ = [
    "EStep",
    "ScoreData",
    "clip_internal",
    "continuous_log_likelihood",
    "e_step",
    "node_coefficients",
    "to_internal",
    "to_natural",
]

# Box of the internal coordinates: |d| ≤ 30; e⁻⁷ ≤ σ ≤ e³ logits (scores clipped at
# ε = 0.001 lie within ±6.9); −10 ≤ τ ≤ 25.
INTERCEPT_BOUND = 30.0
LOG_SIGMA_BOUNDS = (-7.0, 3.0)
TAU_BOUNDS = (-10.0, 25.0)


@dataclass(frozen=True)
class ScoreData:
    """What the E-step needs of a response matrix: the answered mask ``obs`` (N, J) as
    0/1, the statistics ``t1``, ``t2`` (N, J) (0 where missing), Σ_j −log(x(1 − x)) per
    subject ``log_jac`` (N,), and which items are CRM items ``is_crm`` (J,)."""

    obs: FloatArray
    t1: FloatArray
    t2: FloatArray
    log_jac: FloatArray
    is_crm: BoolArray

    @classmethod
    def of(cls, responses: ContinuousResponses, is_crm: BoolArray, epsilon: float) -> ScoreData:
        observed = responses.observed
        x = clip_scores(np.where(observed, responses.values, 0.5), epsilon)
        t1, t2 = statistics(is_crm[None, :], x)
        obs = observed.astype(np.float64)
        return cls(obs, t1 * obs, t2 * obs, (log_jacobian(x) * obs).sum(axis=1), is_crm)


def to_natural(psi: FloatArray, is_crm: BoolArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(a, d, dispersion) from ψ (J, 3): dispersion σ for CRM items, τ for Beta items."""
    disp = np.where(is_crm, np.exp(psi[:, 2]), psi[:, 2])
    return np.exp(psi[:, 0]), psi[:, 1].copy(), np.asarray(disp)


def to_internal(
    a: FloatArray, d: FloatArray, dispersion: FloatArray, is_crm: BoolArray
) -> FloatArray:
    """ψ (J, 3) from (a, d, σ or τ), clipped to the box."""
    kappa = np.where(is_crm, np.log(np.where(is_crm, dispersion, 1.0)), dispersion)
    return clip_internal(np.column_stack([np.log(a), d, kappa]), is_crm)


def clip_internal(psi: FloatArray, is_crm: BoolArray) -> FloatArray:
    """A copy of ψ (J, 3) with every coordinate clipped to its box."""
    out = psi.copy()
    out[:, 0] = np.clip(out[:, 0], *LOG_SLOPE_BOUNDS)
    out[:, 1] = np.clip(out[:, 1], -INTERCEPT_BOUND, INTERCEPT_BOUND)
    lo = np.where(is_crm, LOG_SIGMA_BOUNDS[0], TAU_BOUNDS[0])
    hi = np.where(is_crm, LOG_SIGMA_BOUNDS[1], TAU_BOUNDS[1])
    out[:, 2] = np.clip(out[:, 2], lo, hi)
    return out


def node_coefficients(
    psi: FloatArray, is_crm: BoolArray, theta: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(A, B, C) of every item at every node, each (J, Q)."""
    a, d, disp = to_natural(psi, is_crm)
    eta = a[:, None] * theta[None, :] + d[:, None]
    return coefficients(is_crm[:, None], eta, disp[:, None])


@dataclass(frozen=True)
class EStep:
    """The log-likelihood, the posterior-weighted statistics and the posteriors."""

    loglik: float
    n: FloatArray  # (J, Q) expected answers at each node
    s1: FloatArray  # (J, Q) Σ_n t₁ p_nq
    s2: FloatArray  # (J, Q) Σ_n t₂ p_nq
    posterior: FloatArray  # (N, Q), rows sum to 1


def e_step(data: ScoreData, psi: FloatArray, theta: FloatArray, log_w: FloatArray) -> EStep:
    """Posteriors of every subject over the nodes and the statistics of the M-step."""
    a_c, b_c, c_c = node_coefficients(psi, data.is_crm, theta)
    joint = data.obs @ a_c + data.t1 @ b_c + data.t2 @ c_c
    joint += log_w
    log_marginal, post = normalised(joint)
    loglik = float(log_marginal.sum() + data.log_jac.sum())
    return EStep(loglik, data.obs.T @ post, data.t1.T @ post, data.t2.T @ post, post)


def check_match(responses: ContinuousResponses, params: ContinuousParams) -> None:
    """Raise unless ``params`` covers the items of ``responses`` in order."""
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("the responses and the parameters must list the same items in order")


def params_internal(params: ContinuousParams) -> FloatArray:
    """ψ of a pool's parameters (not clipped)."""
    crm = params.is_crm
    kappa = np.where(crm, np.log(np.where(crm, params.sigma, 1.0)), params.tau)
    return np.column_stack([np.log(params.a), params.d, kappa])


def continuous_log_likelihood(
    responses: ContinuousResponses,
    params: ContinuousParams,
    n_quad: int = 61,
    bound: float = 6.0,
) -> float:
    """Σ_n log Σ_q w_q Π_j f_j(x_nj | θ_q) on the x scale (scores clipped at
    ``params.epsilon``) on the calibrator's grid: the quantity a fit maximises (without
    priors), to compare parameter sets, or the two models, on the same data."""
    check_match(responses, params)
    grid = normal_grid(n_quad, bound)
    data = ScoreData.of(responses, params.is_crm, params.epsilon)
    return e_step(data, params_internal(params), grid.points, grid.log_weights).loglik
