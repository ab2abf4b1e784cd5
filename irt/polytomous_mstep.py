"""The M-step of the polytomous EM for one group of like items: Fisher scoring on
Σ_qk r_jkq log P_jk(θ_q) + log prior in the internal coordinates ψ
(``irt.polytomous_layout``), vectorised over the group's items.

The expected information Σ_q n_jq Σ_k P_jk v vᵀ (v = ∂ log P_jk/∂ψ) is positive
semi-definite however far the item is from its optimum, and a step that lowers an
item's objective is halved until it does not (``irt.estimation.fisher_scoring``), so
that no item's objective ever falls and every cycle is a generalised EM step
(Dempster, Laird & Rubin 1977). The coordinates, the nodes and the expected counts may
be numpy arrays or torch tensors on one device: the step runs where they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from irt.estimation.arrays import einsum, namespace
from irt.estimation.fisher_scoring import fisher_scoring
from irt.polytomous import curves
from irt.polytomous_layout import (
    Group,
    clip_internal,
    free_scores,
    natural_derivatives,
    natural_jacobian,
    to_natural,
)
from irt.polytomous_priors import PolytomousPriors
from irt.types import FloatArray, IntArray

__all__ = ["GroupMStep"]


@dataclass(frozen=True)
class GroupMStep:
    """What an item group's M-step needs besides its coordinates."""

    group: Group
    theta: FloatArray  # (Q,)
    priors: PolytomousPriors

    def objective(self, psi: FloatArray, r: FloatArray) -> FloatArray:
        """Σ_qk r_qjk log P_jk(θ_q) + log prior, per item; ``r`` is (Q, J_g, K)."""
        g = self.group
        a, d, c, ak = to_natural(g, psi, self.priors.log_slope)
        log_p = curves(g.kind, self.theta, a, d, c, ak=ak).log_p
        prior = self.priors.log_density(a, d, c, g.kind.has_guessing, free_scores(g, ak))
        return einsum("qjk,qjk->j", r, log_p) + prior  # type: ignore[no-any-return]

    def score_and_information(
        self, psi: FloatArray, r: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """The objective's gradient (J_g, w) and expected information (J_g, w, w) in ψ."""
        g, pri = self.group, self.priors
        a, d, c, ak = to_natural(g, psi, pri.log_slope)
        log_p, v = natural_derivatives(g, self.theta, a, d, c, ak)
        xp = namespace(v)
        grad = einsum("qjk,qjkl->jl", r, v)
        weight = xp.sum(r, axis=2, keepdims=True) * xp.exp(log_p)  # n_qj P_qjk
        info = einsum("qjk,qjkl,qjkm->jlm", weight, v, v)
        m = g.m
        if pri.d_sd is not None:
            grad[:, 1 : m + 1] -= (d - cast(float, pri.d_mean)) / pri.d_sd**2
            idx = np.arange(1, m + 1)
            info[:, idx, idx] += 1.0 / pri.d_sd**2
        free = g.kind.family.free_scores(m)
        if pri.ak_sd is not None and free:
            assert ak is not None
            at = np.arange(g.width - free, g.width)
            grad[:, at] += pri.scores_gradient(ak[:, :free])
            info[:, at, at] += 1.0 / pri.ak_sd**2
        jac = natural_jacobian(g, psi, pri.log_slope)
        grad = einsum("jl,jlm->jm", grad, jac)
        info = einsum("jla,jlm,jmb->jab", jac, info, jac)
        if pri.a_sdlog is not None:  # in α = log a, with the density's −log a term
            grad[:, 0] += -1.0 - (psi[:, 0] - cast(float, pri.a_meanlog)) / pri.a_sdlog**2
            info[:, 0, 0] += 1.0 / pri.a_sdlog**2
        if pri.a_sd is not None:
            grad[:, 0] -= (a - cast(float, pri.a_mean)) / pri.a_sd**2
            info[:, 0, 0] += 1.0 / pri.a_sd**2
        if pri.c_alpha is not None and g.kind.has_guessing:
            al, be = pri.c_alpha, cast(float, pri.c_beta)
            grad[:, m + 1] += (al - 1) * (1 - c) - (be - 1) * c
            info[:, m + 1, m + 1] += (al + be - 2) * c * (1 - c)
        return grad, info

    def run(self, psi: FloatArray, r: FloatArray, max_steps: int, tol: float) -> FloatArray:
        """Safeguarded Fisher scoring (``irt.estimation.fisher_scoring``) from ``psi``,
        items dropped once their step is below ``tol``."""
        return fisher_scoring(_OnCounts(self, r), psi, max_steps, tol)


@dataclass(frozen=True)
class _OnCounts:
    """A group's M-step on its expected counts ``r`` (Q, J_g, K): the
    ``irt.estimation.fisher_scoring.ItemObjective`` of its items."""

    step: GroupMStep
    r: FloatArray

    def rows(self, items: IntArray) -> _OnCounts:
        return _OnCounts(self.step, self.r[:, items])

    def objective(self, psi: FloatArray) -> FloatArray:
        return self.step.objective(psi, self.r)

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.step.score_and_information(psi, self.r)

    def clip(self, psi: FloatArray) -> FloatArray:
        return clip_internal(self.step.group, psi, self.step.priors.log_slope)
