"""Marginal maximum likelihood (Bayes modal with priors) for pools of continuous items
(``irt.continuous``: Samejima's CRM and the Beta IRT model) on one θ ~ N(0, 1), by
Bock–Aitkin EM (Bock & Aitkin 1981).

Each cycle is an E-step over a fixed quadrature grid (``irt.continuous_estep``; missing
answers are left out) and an M-step per item (``irt.continuous_mstep``: the CRM in
closed form, the Beta by safeguarded Fisher scoring) that never lowers an item's
objective, so every cycle is a generalised EM step. Cycles are optionally accelerated by
SQUAREM (Varadhan & Roland 2008, scheme S3), whose extrapolation is kept only where it
beats the plain cycles' log posterior. Start values come from ``irt.continuous_start``,
standard errors from ``irt.continuous_se``, scores from ``irt.continuous_scoring``.

The log-likelihood is on the x scale (with each model's Jacobian), so the two models'
``loglik_``, ``aic_`` and ``bic_`` on the same scores compare directly — with the same ε.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from irt.continuous import DEFAULT_EPSILON, ContinuousParams, ContinuousType
from irt.continuous_estep import EStep, ScoreData, clip_internal, e_step, to_natural
from irt.continuous_kernels import check_epsilon
from irt.continuous_mstep import m_step
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_se import ContinuousStandardErrors, MarginalLogPosterior, standard_errors_at
from irt.continuous_start import (
    ItemTypes,
    check_item_types,
    check_items,
    classical_start,
    resolve_item_types,
    start_from,
)
from irt.em_settings import check_em_settings
from irt.errors import ConvergenceWarning
from irt.quadrature import normal_grid
from irt.types import BoolArray, FloatArray

__all__ = ["ContinuousCalibrator"]

#: The methods accepted for standard errors.
SE_METHODS = ("oakes",)
# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


class ContinuousCalibrator:
    """Fit a pool of continuous items (scores in [0, 1]) on one θ ~ N(0, 1).

    ``item_types``: "crm" or "beta" for every item, one per item (a sequence), or a
    mapping from every item id to its type. ``priors``: None is plain marginal ML
    (``ContinuousPriors()``). Scores are clipped to [``epsilon``, 1 − ``epsilon``].
    ``n_quad`` points on [−``bound``, ``bound``]; EM stops when no parameter (a, d,
    log σ or τ) moves more than ``tol`` in a cycle, or after ``max_iter`` cycles with a
    ``ConvergenceWarning``. ``squarem`` accelerates the cycles. ``standard_errors``:
    "oakes" (observed information) or None.

    ``fit(responses)`` sets ``params_`` (with standard errors), ``loglik_`` (x scale),
    ``logpost_`` (plus the log prior), ``trace_`` (the log posterior after every cycle
    kept), ``n_iter_`` (EM maps), ``converged_``, ``n_parameters_`` (3 per item),
    ``aic_``, ``bic_`` (n = subjects with an answer), ``se_``, ``priors_``, ``epsilon_``,
    ``n_clipped_`` (answers moved to ε or 1 − ε) and ``seconds_``.
    """

    def __init__(
        self,
        item_types: ItemTypes,
        *,
        priors: ContinuousPriors | None = None,
        epsilon: float = DEFAULT_EPSILON,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
        squarem: bool = True,
        standard_errors: str | None = "oakes",
    ) -> None:
        check_em_settings(
            tol=tol,
            max_iter=max_iter,
            max_newton=max_newton,
            standard_errors=standard_errors,
            se_methods=SE_METHODS,
            n_quad=n_quad,
            bound=bound,
        )
        if not isinstance(item_types, Mapping):
            check_item_types(item_types)
        self.item_types = item_types
        self.priors = priors
        self.epsilon = check_epsilon(epsilon)
        self.n_quad = n_quad
        self.bound = bound
        self.tol = tol
        self.max_iter = max_iter
        self.max_newton = max_newton
        self.squarem = squarem
        self.standard_errors = standard_errors

    def describe(self) -> dict[str, Any]:
        """Settings and priors, JSON-ready (the priors actually used after a fit)."""
        priors = getattr(self, "priors_", self.priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM" + (" + SQUAREM" if self.squarem else ""),
            "epsilon": self.epsilon,
            "n_quad": self.n_quad,
            "bound": self.bound,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "standard_errors": self.standard_errors,
            "priors": (priors or ContinuousPriors()).describe(),
        }
        if hasattr(self, "params_"):
            kinds = [t.value for t in self.params_.item_types]
            out["item_types"] = {k: kinds.count(k) for k in sorted(set(kinds))}
            out["n_clipped"] = self.n_clipped_
        return out

    def fit(
        self, responses: ContinuousResponses | object, start: ContinuousParams | None = None
    ) -> ContinuousCalibrator:
        """Estimate every item's parameters from ``responses`` (a ``ContinuousResponses``
        or an (N, J) array with NaN for missing answers)."""
        t0 = time.perf_counter()
        if not isinstance(responses, ContinuousResponses):
            responses = ContinuousResponses.from_array(responses)
        is_crm = resolve_item_types(self.item_types, responses)
        priors = self.priors if self.priors is not None else ContinuousPriors()
        check_items(responses, is_crm, priors, self.epsilon)
        data = ScoreData.of(responses, is_crm, self.epsilon)
        grid = normal_grid(self.n_quad, self.bound)
        if start is not None:
            psi = start_from(start, responses, is_crm)
        else:
            psi = classical_start(responses, is_crm, self.epsilon)
        self.trace_: list[float] = []
        converged, n_iter, psi, est = self._iterate(
            psi, data, grid.points, grid.log_weights, priors
        )
        if not converged:
            warnings.warn(
                f"continuous EM stopped at its cap of {self.max_iter} cycles before the item "
                f"parameters settled (tolerance {self.tol})",
                ConvergenceWarning,
                stacklevel=2,
            )
        se = None
        if self.standard_errors is not None:
            objective = MarginalLogPosterior(data, grid.points, grid.log_weights, priors)
            se = standard_errors_at(objective, psi, responses.item_ids)
        self.params_ = assemble_params(responses, is_crm, psi, self.epsilon, se)
        self.loglik_ = est.loglik
        self.logpost_ = est.loglik + float(priors.log_density(psi, is_crm).sum())
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_parameters_ = 3 * responses.n_items
        n_subjects = int(responses.observed.any(axis=1).sum())
        self.aic_ = -2.0 * self.loglik_ + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * self.loglik_ + self.n_parameters_ * float(np.log(n_subjects))
        self.se_ = se
        self.priors_ = priors
        self.epsilon_ = self.epsilon
        self.n_clipped_ = responses.n_clipped(self.epsilon)
        self.seconds_ = time.perf_counter() - t0
        return self

    def _iterate(
        self,
        psi: FloatArray,
        data: ScoreData,
        theta: FloatArray,
        log_w: FloatArray,
        priors: ContinuousPriors,
    ) -> tuple[bool, int, FloatArray, EStep]:
        """EM cycles, with SQUAREM if asked: two plain cycles x0 → x1 → x2 give
        r = x1 − x0 and v = x2 − x1 − r; the point x0 − 2αr + α²v, α = −|r|/|v|, replaces
        x2 only if its log posterior is higher. Convergence is judged on plain steps."""
        is_crm = data.is_crm
        inner_tol = min(self.tol / 10, 1e-6)

        def objective(est: EStep, x: FloatArray) -> float:
            return est.loglik + float(priors.log_density(x, is_crm).sum())

        def em_map(est: EStep, x: FloatArray) -> FloatArray:
            return m_step(x, est, theta, is_crm, priors, self.max_newton, inner_tol)

        def change(new: FloatArray, old: FloatArray) -> float:
            return float(
                np.abs(reported_coordinates(new, is_crm) - reported_coordinates(old, is_crm)).max()
            )

        est0 = e_step(data, psi, theta, log_w)
        self.trace_.append(objective(est0, psi))
        n_maps = 0
        while n_maps < self.max_iter:
            x1 = em_map(est0, psi)
            n_maps += 1
            est1 = e_step(data, x1, theta, log_w)
            self.trace_.append(objective(est1, x1))
            moved = change(x1, psi)
            if moved < self.tol or n_maps >= self.max_iter:
                return moved < self.tol, n_maps, x1, est1
            if not self.squarem:
                psi, est0 = x1, est1
                continue
            x2 = em_map(est1, x1)
            n_maps += 1
            est2 = e_step(data, x2, theta, log_w)
            moved = change(x2, x1)
            x0, psi, est0 = psi, x2, est2
            best = objective(est2, x2)
            if moved >= self.tol:
                r, v = x1 - x0, x2 - 2 * x1 + x0
                v_norm = float(np.sqrt((v * v).sum()))
                alpha = -1.0
                if v_norm > 0:
                    alpha = max(-float(np.sqrt((r * r).sum())) / v_norm, -_MAX_EXTRAPOLATION)
                if alpha < -1.0:
                    trial = clip_internal(x0 - 2 * alpha * r + alpha**2 * v, is_crm)
                    trial_est = e_step(data, trial, theta, log_w)
                    if objective(trial_est, trial) > best:
                        psi, est0, best = trial, trial_est, objective(trial_est, trial)
            self.trace_.append(best)
            if moved < self.tol:
                return True, n_maps, psi, est0
        return False, n_maps, psi, est0


def reported_coordinates(psi: FloatArray, is_crm: BoolArray) -> FloatArray:
    """(a, d, log σ or τ): the coordinates convergence is judged on."""
    return np.column_stack([np.exp(psi[:, 0]), psi[:, 1], psi[:, 2]])


def assemble_params(
    responses: ContinuousResponses,
    is_crm: BoolArray,
    psi: FloatArray,
    epsilon: float,
    se: ContinuousStandardErrors | None,
) -> ContinuousParams:
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
