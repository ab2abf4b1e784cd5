"""Continuous items (``irt.continuous``: Samejima's CRM and the Beta IRT model) as one
family of the EM on one θ (``irt.mixed_joint``): the family's flat vector is ψ = (log a,
d, κ) item by item (``irt.continuous_estep``), its node log-likelihood three matrix
products with the exponential-family coefficients, and its M-step
``irt.continuous_mstep.m_step`` on the posterior-weighted statistics (N, S1, S2) under
the posterior the joint E-step gives. The E-step's rows are always the subjects (no two
continuous answers coincide).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.continuous import ContinuousParams, ContinuousType
from irt.continuous_estep import EStep, ScoreData, clip_internal, node_coefficients, to_natural
from irt.continuous_mstep import m_step
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_se import ContinuousStandardErrors, MarginalLogPosterior, standard_errors_at
from irt.continuous_start import (
    ItemTypes,
    check_items,
    classical_start,
    resolve_item_types,
    start_from,
)
from irt.types import BoolArray, FloatArray

__all__ = ["ContinuousFamily", "assemble_params", "reported_coordinates"]


@dataclass(frozen=True)
class ContinuousFamily:
    """The continuous items of a pool: the scores' sufficient statistics, item types and
    priors."""

    responses: ContinuousResponses
    data: ScoreData
    priors: ContinuousPriors
    epsilon: float
    theta: FloatArray

    @classmethod
    def of(
        cls,
        responses: ContinuousResponses,
        item_types: ItemTypes,
        priors: ContinuousPriors | None,
        epsilon: float,
        theta: FloatArray,
    ) -> ContinuousFamily:
        """The family of ``responses`` (scores clipped at ``epsilon``); ``priors`` None
        is plain ML. Refused with one line where an item cannot be fitted."""
        is_crm = resolve_item_types(item_types, responses)
        pri = priors if priors is not None else ContinuousPriors()
        check_items(responses, is_crm, pri, epsilon)
        data = ScoreData.of(responses, is_crm, epsilon)
        return cls(responses, data, pri, epsilon, theta)

    @property
    def n_parameters(self) -> int:
        return 3 * self.responses.n_items

    @property
    def row_weights(self) -> FloatArray | None:
        return None

    def psi(self, x: FloatArray) -> FloatArray:
        return x.reshape(-1, 3)

    def start(self, start: ContinuousParams | None) -> FloatArray:
        """ψ from ``start``'s parameters, or from classical statistics if None."""
        is_crm = self.data.is_crm
        if start is not None:
            return start_from(start, self.responses, is_crm).ravel()
        return classical_start(self.responses, is_crm, self.epsilon).ravel()

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        d = self.data
        a_c, b_c, c_c = node_coefficients(self.psi(x), d.is_crm, self.theta)
        return d.obs @ a_c + d.t1 @ b_c + d.t2 @ c_c, float(d.log_jac.sum())

    def m_step(
        self, x: FloatArray, post: FloatArray, max_newton: int, inner_tol: float
    ) -> FloatArray:
        d = self.data
        est = EStep(np.nan, d.obs.T @ post, d.t1.T @ post, d.t2.T @ post, post)
        new = m_step(self.psi(x), est, self.theta, d.is_crm, self.priors, max_newton, inner_tol)
        return new.ravel()

    def log_prior(self, x: FloatArray) -> float:
        return float(self.priors.log_density(self.psi(x), self.data.is_crm).sum())

    def reported(self, x: FloatArray) -> FloatArray:
        """(a, d, log σ or τ): the coordinates EM's convergence is judged on."""
        return reported_coordinates(self.psi(x)).ravel()

    def clip(self, x: FloatArray) -> FloatArray:
        return clip_internal(self.psi(x), self.data.is_crm).ravel()

    def standard_errors(
        self, x: FloatArray, log_w: FloatArray, method: str = "oakes"
    ) -> ContinuousStandardErrors:
        """Standard errors at ``x`` from the observed information (``irt.continuous_se``;
        ``method`` "oakes", the one it has), on the grid of the family's nodes with log
        weights ``log_w``."""
        objective = MarginalLogPosterior(self.data, self.theta, log_w, self.priors)
        return standard_errors_at(objective, self.psi(x), self.responses.item_ids)

    def params(self, x: FloatArray, se: ContinuousStandardErrors | None = None) -> ContinuousParams:
        return assemble_params(self.responses, self.data.is_crm, self.psi(x), self.epsilon, se)


def reported_coordinates(psi: FloatArray) -> FloatArray:
    """(a, d, log σ or τ) per item, (J, 3)."""
    return np.column_stack([np.exp(psi[:, 0]), psi[:, 1], psi[:, 2]])


def assemble_params(
    responses: ContinuousResponses,
    is_crm: BoolArray,
    psi: FloatArray,
    epsilon: float,
    se: ContinuousStandardErrors | None,
) -> ContinuousParams:
    """The fit's parameters from ψ (J, 3) and their standard errors."""
    a, d, disp = to_natural(psi, is_crm)
    return ContinuousParams(
        item_ids=responses.item_ids,
        item_types=tuple(ContinuousType.CRM if c else ContinuousType.BETA for c in is_crm),
        a=a,
        d=d,
        sigma=np.where(is_crm, disp, np.nan),
        tau=np.where(is_crm, np.nan, disp),
        epsilon=epsilon,
        se_a=None if se is None else se.a,
        se_d=None if se is None else se.d,
        se_sigma=None if se is None else se.sigma,
        se_tau=None if se is None else se.tau,
    )
