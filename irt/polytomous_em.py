"""Marginal maximum likelihood (Bayes modal with priors) for pools of binary, graded,
partial-credit and sequential items on one θ ~ N(0, 1), by Bock–Aitkin EM (Bock &
Aitkin 1981).

Each cycle is an E-step over the distinct response patterns
(``irt.polytomous_estep``) and a Fisher-scoring M-step per group of like items
(``irt.polytomous_mstep``) that never lowers an item's objective, so that every cycle
is a generalised EM step (Dempster, Laird & Rubin 1977). Cycles are accelerated by
SQUAREM (Varadhan & Roland 2008, scheme S3), whose extrapolation is kept only where it
beats the plain cycles' log posterior. Start values come from ``irt.polytomous_start``,
standard errors from ``irt.polytomous_se``; scores under a fitted pool from
``irt.polytomous_scoring``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from irt.em_settings import check_em_settings
from irt.errors import ConvergenceWarning
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_estep import EStep, e_step, log_table
from irt.polytomous_layout import (
    Layout,
    Natural,
    Patterns,
    clip_internal,
    to_internal,
    to_natural,
    to_reported,
)
from irt.polytomous_mstep import GroupMStep
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_se import (
    SE_METHODS,
    MarginalLogPosterior,
    PolytomousStandardErrors,
    standard_errors_at,
)
from irt.polytomous_start import (
    ItemTypes,
    check_identified,
    classical_start,
    resolve_item_types,
    start_from,
)
from irt.quadrature import normal_grid
from irt.types import FloatArray

__all__ = ["PolytomousCalibrator"]

# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


class PolytomousCalibrator:
    """Fit a pool of 2PL, 3PL, graded, gpcm and sequential items on one θ ~ N(0, 1).

    ``item_types``: one type for every item, one per item (a sequence), or a mapping
    from item id to type for some items; items not given one get R mirt's default (2PL
    for two categories, graded for more). ``priors``: ``None`` gives
    ``PolytomousPriors.default_for`` (a Beta prior on c when there are 3PL items,
    otherwise plain ML). ``n_quad`` points on [−``bound``, ``bound``]; EM stops when no
    parameter (a, d's, logit c) moves more than ``tol`` in a cycle, or after
    ``max_iter`` cycles with a ``ConvergenceWarning``. ``standard_errors``: "oakes"
    (observed information), "xpd" (cross-product of scores) or None.

    ``fit(responses)`` sets ``params_`` (with standard errors), ``loglik_``,
    ``logpost_`` (plus the log prior), ``n_iter_``, ``converged_``, ``n_parameters_``,
    ``df_`` (Π_j K_j − 1 − n_parameters_, mirt's ``df``), ``aic_``, ``bic_``, ``se_``
    (``PolytomousStandardErrors`` or None), ``priors_`` and ``seconds_``.
    """

    def __init__(
        self,
        item_types: ItemTypes = None,
        *,
        priors: PolytomousPriors | None = None,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
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
        self.item_types = item_types
        self.priors = priors
        self.n_quad = n_quad
        self.bound = bound
        self.tol = tol
        self.max_iter = max_iter
        self.max_newton = max_newton
        self.standard_errors = standard_errors

    def describe(self) -> dict[str, Any]:
        """Settings and priors, JSON-ready (the priors actually used after a fit)."""
        priors = getattr(self, "priors_", self.priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM",
            "n_quad": self.n_quad,
            "bound": self.bound,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "standard_errors": self.standard_errors,
            "priors": None if priors is None else priors.describe(),
        }
        if hasattr(self, "params_"):
            kinds = [t.value for t in self.params_.item_types]
            out["item_types"] = {k: kinds.count(k) for k in sorted(set(kinds))}
        return out

    def fit(
        self, responses: PolytomousResponses, start: PolytomousParams | None = None
    ) -> PolytomousCalibrator:
        """Estimate every item's parameters from ``responses`` (missing answers are
        left out of the likelihood)."""
        t0 = time.perf_counter()
        types = resolve_item_types(self.item_types, responses)
        priors = self.priors if self.priors is not None else PolytomousPriors.default_for(types)
        check_identified(responses, types, priors)
        layout = Layout.of(types, responses.n_categories)
        patterns = Patterns.of(responses.values, layout)
        grid = normal_grid(self.n_quad, self.bound)
        theta, log_w = grid.points, grid.log_weights
        steps = [GroupMStep(g, theta, priors) for g in layout.groups]
        if start is not None:
            naturals = start_from(start, responses, layout)
        else:
            naturals = classical_start(responses, layout, priors)
        psi = [
            to_internal(g, *nat, priors.log_slope)
            for g, nat in zip(layout.groups, naturals, strict=True)
        ]
        converged, n_iter, psi, est = self._iterate(psi, layout, patterns, steps, log_w)
        if not converged:
            warnings.warn(
                f"polytomous EM stopped at its cap of {self.max_iter} cycles before the "
                f"item parameters settled (tolerance {self.tol})",
                ConvergenceWarning,
                stacklevel=2,
            )
        naturals = [
            to_natural(g, p, priors.log_slope) for g, p in zip(layout.groups, psi, strict=True)
        ]
        log_prior = groups_log_prior(priors, layout, naturals)
        se = None
        if self.standard_errors is not None:
            objective = MarginalLogPosterior(layout, patterns, theta, log_w, priors)
            se = standard_errors_at(objective, naturals, responses.item_ids, self.standard_errors)
        self.params_ = assemble_params(responses, types, layout, naturals, se)
        self.loglik_ = est.loglik
        self.logpost_ = est.loglik + log_prior
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_parameters_ = int(sum(len(g.items) * g.width for g in layout.groups))
        self.df_ = int(np.prod([int(k) for k in responses.n_categories], dtype=object)) - 1
        self.df_ -= self.n_parameters_
        n_subjects = int(responses.observed.any(axis=1).sum())
        self.aic_ = -2.0 * self.loglik_ + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * self.loglik_ + self.n_parameters_ * float(np.log(n_subjects))
        self.se_ = se
        self.priors_ = priors
        self.seconds_ = time.perf_counter() - t0
        return self

    def _iterate(
        self,
        psi: list[FloatArray],
        layout: Layout,
        patterns: Patterns,
        steps: list[GroupMStep],
        log_w: FloatArray,
    ) -> tuple[bool, int, list[FloatArray], EStep]:
        """EM cycles with SQUAREM: two plain cycles x0 → x1 → x2 give r = x1 − x0 and
        v = x2 − x1 − r; the point x0 − 2αr + α²v, α = −|r|/|v|, replaces x2 only if its
        log posterior is higher. Convergence is judged on plain EM steps."""
        log_slope = steps[0].priors.log_slope if steps else False
        theta = steps[0].theta if steps else np.zeros(1)
        # The M-step needs to be an order of magnitude tighter than EM itself.
        inner_tol = min(self.tol / 10, 1e-6)

        def naturals_of(x: list[FloatArray]) -> list[Natural]:
            return [to_natural(g, p, log_slope) for g, p in zip(layout.groups, x, strict=True)]

        def e_step_at(x: list[FloatArray]) -> EStep:
            return e_step(patterns, log_table(layout, naturals_of(x), theta), log_w)

        def objective(est: EStep, x: list[FloatArray]) -> float:
            pri = steps[0].priors if steps else PolytomousPriors()
            return est.loglik + groups_log_prior(pri, layout, naturals_of(x))

        def em_map(est: EStep, x: list[FloatArray]) -> list[FloatArray]:
            out = []
            for st, p in zip(steps, x, strict=True):
                r = est.counts[st.group.cols].transpose(2, 0, 1)  # (Q, J_g, K)
                out.append(st.run(p, r, self.max_newton, inner_tol))
            return out

        def reported(x: list[FloatArray]) -> FloatArray:
            return to_reported(layout, naturals_of(x))

        def flat(x: list[FloatArray]) -> FloatArray:
            return np.concatenate([p.ravel() for p in x])

        def unflat(v: FloatArray) -> list[FloatArray]:
            out, at = [], 0
            for g in layout.groups:
                size = len(g.items) * g.width
                block = v[at : at + size].reshape(len(g.items), g.width)
                out.append(clip_internal(g, block, log_slope))
                at += size
            return out

        est0 = e_step_at(psi)
        n_maps = 0
        while n_maps < self.max_iter:
            x1 = em_map(est0, psi)
            n_maps += 1
            change = float(np.abs(reported(x1) - reported(psi)).max())
            est1 = e_step_at(x1)
            if change < self.tol or n_maps >= self.max_iter:
                return change < self.tol, n_maps, x1, est1
            x2 = em_map(est1, x1)
            n_maps += 1
            est2 = e_step_at(x2)
            change = float(np.abs(reported(x2) - reported(x1)).max())
            if change < self.tol:
                return True, n_maps, x2, est2
            r = flat(x1) - flat(psi)
            v = flat(x2) - flat(x1) - r
            v_norm = float(np.sqrt(v @ v))
            x0, psi, est0 = psi, x2, est2
            if v_norm > 0:
                alpha = max(-float(np.sqrt(r @ r)) / v_norm, -_MAX_EXTRAPOLATION)
                if alpha < -1.0:
                    trial = unflat(flat(x0) - 2 * alpha * r + alpha**2 * v)
                    trial_est = e_step_at(trial)
                    if objective(trial_est, trial) > objective(est2, x2):
                        psi, est0 = trial, trial_est
        return False, n_maps, psi, est0


def groups_log_prior(
    priors: PolytomousPriors, layout: Layout, naturals: Sequence[Natural]
) -> float:
    """``PolytomousPriors.log_prior`` of the groups' (a, d, c), without assembling (and
    validating) a ``PolytomousParams`` at every SQUAREM trial."""
    return sum(
        float(priors.log_density(*nat, g.kind.has_guessing).sum())
        for g, nat in zip(layout.groups, naturals, strict=True)
    )


def assemble_params(
    responses: PolytomousResponses,
    types: Sequence[ItemType],
    layout: Layout,
    naturals: Sequence[Natural],
    se: PolytomousStandardErrors | None,
) -> PolytomousParams:
    """The fit's parameters, item by item, from the groups' (a, d, c) and their
    standard errors."""
    n_items = responses.n_items
    a, c = np.zeros(n_items), np.zeros(n_items)
    d = np.full((n_items, max(responses.n_categories) - 1), np.nan)
    for g, (ga, gd, gc) in zip(layout.groups, naturals, strict=True):
        a[g.items], d[g.items, : g.m], c[g.items] = ga, gd, gc
    return PolytomousParams(
        item_ids=responses.item_ids,
        item_types=tuple(types),
        a=a,
        d=d,
        c=c,
        se_a=None if se is None else se.a,
        se_d=None if se is None else se.d,
        se_c=None if se is None else se.c,
    )
