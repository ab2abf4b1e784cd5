"""The M-step of the continuous EM: per item, maximise the expected complete-data log
posterior Σ_q [N_q A_q + S1_q B_q + S2_q C_q] + log prior (``irt.continuous_estep``)
in ψ = (log a, d, κ).

- CRM items without priors, in closed form: the weighted least-squares line of the
  node means S1_q/N_q on θ_q with weights N_q gives (a, d) (a kept at its lower bound
  when the line's slope is below it), and σ² is the weighted residual variance
  Σ_q (S2_q − 2μ_q S1_q + N_q μ_q²)/Σ_q N_q — the normal linear model's ML estimates.
- Beta items, and CRM items under priors: Fisher scoring
  (``irt.estimation.fisher_scoring``) with the expected information
  Σ_q N_q Jᵀ I(η_q, κ) J (J = ∂(η, κ)/∂ψ), which is positive semi-definite however far
  the item is from its optimum; a step that lowers the item's objective is halved until
  it does not.

Either way no item's objective falls, so every cycle is a generalised EM step (Dempster,
Laird & Rubin 1977). The derivatives per node, with η = aθ + d:

    CRM (κ = log σ):  ∂/∂η = (S1 − Nη)/σ²,  ∂/∂κ = −N + (S2 − 2ηS1 + Nη²)/σ²;
                       I_ηη = N/σ², I_κκ = 2N, I_ηκ = 0.
    Beta (κ = τ):     g_m = S1 − N(ψ(m) − ψ(m + n)), g_n = S2 − N(ψ(n) − ψ(m + n)),
                       ∂/∂η = (m g_m − n g_n)/2, ∂/∂τ = (m g_m + n g_n)/2;
                       I = N × ``irt.continuous_kernels.beta_information``

(ψ the digamma function).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import digamma

from irt.continuous_estep import EStep, clip_internal, node_coefficients, to_natural
from irt.continuous_kernels import beta_information, beta_shapes
from irt.continuous_priors import ContinuousPriors
from irt.estimation.fisher_scoring import fisher_scoring
from irt.families.coordinates import LOG_SLOPE_BOUNDS
from irt.types import BoolArray, FloatArray, IntArray

__all__ = ["ItemStats", "ItemsMStep", "complete_gradient", "m_step", "stats_of"]

ItemStats = tuple[FloatArray, FloatArray, FloatArray]  # (N, S1, S2), each (J, Q)


def stats_of(est: EStep, items: IntArray | None = None) -> ItemStats:
    """The E-step's (N, S1, S2) of the items at positions ``items`` (all by default)."""
    if items is None:
        return est.n, est.s1, est.s2
    return est.n[items], est.s1[items], est.s2[items]


@dataclass(frozen=True)
class ItemsMStep:
    """The M-step's objective of J items on the E-step's statistics ``stats`` at the
    nodes ``theta`` (Q,): an ``irt.estimation.fisher_scoring.ItemObjective``."""

    stats: ItemStats
    theta: FloatArray
    is_crm: BoolArray
    priors: ContinuousPriors

    def rows(self, items: IntArray) -> ItemsMStep:
        n, s1, s2 = self.stats
        return replace(self, stats=(n[items], s1[items], s2[items]), is_crm=self.is_crm[items])

    def objective(self, psi: FloatArray) -> FloatArray:
        """Each item's expected complete-data log posterior (without the
        −log(x(1 − x)) terms, constant in ψ), (J,)."""
        n, s1, s2 = self.stats
        a_c, b_c, c_c = node_coefficients(psi, self.is_crm, self.theta)
        log_prior = self.priors.log_density(psi, self.is_crm)
        return np.asarray((n * a_c + s1 * b_c + s2 * c_c).sum(axis=1) + log_prior)

    def clip(self, psi: FloatArray) -> FloatArray:
        return clip_internal(psi, self.is_crm)

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The objective's gradient (J, 3) and expected information (J, 3, 3) in ψ."""
        g_eta, g_kap, i_ee, i_ek, i_kk = self._node_derivatives(psi)
        slope_theta = np.exp(psi[:, 0])[:, None] * self.theta[None, :]  # ∂η/∂log a
        grad = np.column_stack(
            [(slope_theta * g_eta).sum(axis=1), g_eta.sum(axis=1), g_kap.sum(axis=1)]
        )
        info = np.empty((len(psi), 3, 3))
        info[:, 0, 0] = (slope_theta**2 * i_ee).sum(axis=1)
        info[:, 0, 1] = info[:, 1, 0] = (slope_theta * i_ee).sum(axis=1)
        info[:, 0, 2] = info[:, 2, 0] = (slope_theta * i_ek).sum(axis=1)
        info[:, 1, 1] = i_ee.sum(axis=1)
        info[:, 1, 2] = info[:, 2, 1] = i_ek.sum(axis=1)
        info[:, 2, 2] = i_kk.sum(axis=1)
        grad += self.priors.gradient(psi, self.is_crm)
        info[:, np.arange(3), np.arange(3)] += self.priors.curvature(self.is_crm)
        return grad, info

    def _node_derivatives(
        self, psi: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """Per node (J, Q): the gradient in (η, κ) and the expected information I_ηη,
        I_ηκ, I_κκ."""
        n, s1, s2 = self.stats
        is_crm = self.is_crm
        a, d, disp = to_natural(psi, is_crm)
        eta = a[:, None] * self.theta[None, :] + d[:, None]
        crm = is_crm[:, None]
        # CRM.
        inv_var = 1.0 / np.where(is_crm, disp, 1.0)[:, None] ** 2
        g_eta_c = (s1 - n * eta) * inv_var
        g_kap_c = -n + (s2 - 2 * eta * s1 + n * eta**2) * inv_var
        # Beta.
        m, k = beta_shapes(np.where(crm, 0.0, eta), np.where(is_crm, 0.0, disp)[:, None])
        dg = digamma(m + k)
        g_m = s1 - n * (digamma(m) - dg)
        g_n = s2 - n * (digamma(k) - dg)
        i_ee, i_et, i_tt = beta_information(m, k)
        return (
            np.where(crm, g_eta_c, (m * g_m - k * g_n) / 2),
            np.where(crm, g_kap_c, (m * g_m + k * g_n) / 2),
            np.where(crm, n * inv_var, n * i_ee),
            np.where(crm, 0.0, n * i_et),
            np.where(crm, 2 * n, n * i_tt),
        )


def complete_gradient(
    psi: FloatArray,
    stats: ItemStats,
    theta: FloatArray,
    is_crm: BoolArray,
    priors: ContinuousPriors,
) -> FloatArray:
    """∂/∂ψ of the M-step's objective (``ItemsMStep``), (J, 3); at the E-step's
    statistics of ψ itself, the gradient of the marginal log posterior (Fisher's
    identity)."""
    return ItemsMStep(stats, theta, is_crm, priors).score_and_information(psi)[0]


def crm_closed_form(stats: ItemStats, theta: FloatArray) -> FloatArray:
    """ψ of CRM items maximising the expected complete-data log-likelihood (module
    docstring), within the box of ``clip_internal``."""
    n, s1, s2 = stats
    w = n.sum(axis=1)
    w_t, w_tt = n @ theta, n @ theta**2
    s_y, s_ty = s1.sum(axis=1), s1 @ theta
    det = np.maximum(w * w_tt - w_t**2, 1e-12 * np.maximum(w, 1.0) ** 2)
    a_lo, a_hi = np.exp(LOG_SLOPE_BOUNDS[0]), np.exp(LOG_SLOPE_BOUNDS[1])
    a = np.clip((w * s_ty - w_t * s_y) / det, a_lo, a_hi)
    d = (s_y - a * w_t) / w
    mu = a[:, None] * theta[None, :] + d[:, None]
    rss = (s2 - 2 * mu * s1 + n * mu**2).sum(axis=1)
    log_sigma = 0.5 * np.log(np.maximum(rss / w, 1e-300))
    psi = np.column_stack([np.log(a), d, log_sigma])
    return clip_internal(psi, np.ones(len(psi), dtype=bool))


def m_step(
    psi: FloatArray,
    est: EStep,
    theta: FloatArray,
    is_crm: BoolArray,
    priors: ContinuousPriors,
    max_steps: int,
    tol: float,
) -> FloatArray:
    """ψ after one M-step from ``psi`` on the E-step ``est``."""
    out = psi.copy()
    closed = is_crm & (not priors.any)
    if closed.any():
        idx = np.flatnonzero(closed)
        items = ItemsMStep(stats_of(est, idx), theta, np.ones(idx.size, dtype=bool), priors)
        new = crm_closed_form(items.stats, theta)
        # Kept only where it does not lower the objective (the box can cut the line).
        better = items.objective(new) >= items.objective(psi[idx])
        out[idx[better]] = new[better]
    if (~closed).any():
        idx = np.flatnonzero(~closed)
        items = ItemsMStep(stats_of(est, idx), theta, is_crm[idx], priors)
        out[idx] = fisher_scoring(items, psi[idx], max_steps, tol)
    return out
