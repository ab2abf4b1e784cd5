"""Standard errors of a polytomous fit from the observed information of the marginal
log posterior, as a function of the reported coordinates ρ = (a, d_1..d_m, logit c).

``"oakes"`` (the default) inverts the observed information: the gradient is exact by
Fisher's identity (the complete-data gradient under the E-step's posterior), and
differencing that gradient numerically gives the Hessian (Oakes 1999; R mirt's default
``SE.type``). The complete-data information of the M-step would omit the information
lost to not knowing θ and understate every error; the cross-product of per-subject
scores (``"xpd"``, Louis 1982 / mirt's ``crossprod``) needs one E-step instead of 2·D
(D free parameters) but is noisy in small samples. Covariances between items are kept.
Oakes costs 2·D E-steps: about 3 s for 200 parameters on 2,000 distinct patterns, so
for large pools choose "xpd" or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from irt.errors import IRTError
from irt.estimation.observed_information import (
    hessian_of_gradient,
    invert_information,
    relative_steps,
    root_variance,
)
from irt.polytomous import PolytomousParams
from irt.polytomous_estep import EStep, e_step, log_table
from irt.polytomous_layout import (
    Group,
    Layout,
    Natural,
    Patterns,
    check_match,
    free_scores,
    from_reported,
    natural_derivatives,
    naturals_of,
    to_reported,
)
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.quadrature import normal_grid
from irt.structures import Grid
from irt.types import FloatArray

__all__ = [
    "SE_METHODS",
    "MarginalLogPosterior",
    "PolytomousStandardErrors",
    "polytomous_standard_errors",
    "standard_errors_at",
]

#: The methods accepted for standard errors.
SE_METHODS = ("oakes", "xpd")


@dataclass(frozen=True)
class PolytomousStandardErrors:
    """Standard errors shaped like the parameters — ``a`` (J,), ``d`` (J, max m) with
    NaN padding, ``c`` (J,) with NaN except on 3PL items, ``ak`` (J, max m) with NaN
    except on a nominal item's free scoring values — and the information matrix they
    invert, over the free parameters in ``labels`` order (per item: a, d1..dm, logit c
    for a 3PL item, free ak; ``item.a``, ``item.d1``, ``item.logit_c``, ``item.ak1``)."""

    a: FloatArray
    d: FloatArray
    c: FloatArray
    method: str
    information: FloatArray = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    ak: FloatArray | None = None

    @property
    def condition_number(self) -> float:
        """Ratio of the information matrix's largest to smallest singular value (mirt's
        ``condnum``, ``kappa(info, exact = TRUE)``)."""
        return float(np.linalg.cond(self.information))


class MarginalLogPosterior:
    """The marginal log posterior of a fit, as a function of every item's reported
    coordinates ρ = (a, d_1..d_m, logit c), flattened over the groups in layout order."""

    def __init__(
        self,
        layout: Layout,
        patterns: Patterns,
        theta: FloatArray,
        log_w: FloatArray,
        priors: PolytomousPriors,
    ) -> None:
        self.layout, self.patterns = layout, patterns
        self.theta, self.log_w, self.priors = theta, log_w, priors
        self.grid = Grid.of(theta, log_w)

    def step(self, rho: FloatArray) -> tuple[list[Natural], EStep]:
        """The groups' (a, d, c) at ``rho`` and the E-step there."""
        naturals = from_reported(self.layout, rho)
        table = log_table(self.layout, naturals, self.theta)
        return naturals, e_step(self.patterns, table, self.grid)

    def gradient(self, rho: FloatArray) -> FloatArray:
        """∂/∂ρ of the marginal log posterior: by Fisher's identity the complete-data
        gradient at the E-step's counts."""
        naturals, est = self.step(rho)
        parts = []
        for g, (a, d, c, ak) in zip(self.layout.groups, naturals, strict=True):
            _, v = natural_derivatives(g, self.theta, a, d, c, ak)
            r = est.counts[g.cols].transpose(2, 0, 1)  # (Q, J_g, K)
            grad = np.einsum("qjk,qjkl->jl", r, v)
            grad += self._prior_gradient(g, a, d, c, ak)
            if g.kind.has_guessing:
                grad[:, -1] *= c * (1 - c)  # to logit c
            parts.append(grad.ravel())
        return np.concatenate(parts)

    def _prior_gradient(
        self, g: Group, a: FloatArray, d: FloatArray, c: FloatArray, ak: FloatArray | None
    ) -> FloatArray:
        """∂ log prior/∂(a, d, c, free ak), (J_g, width)."""
        pri = self.priors
        out = np.zeros((len(a), g.width))
        if pri.a_sdlog is not None:
            out[:, 0] = (-1.0 - (np.log(a) - cast(float, pri.a_meanlog)) / pri.a_sdlog**2) / a
        if pri.a_sd is not None:
            out[:, 0] = -(a - cast(float, pri.a_mean)) / pri.a_sd**2
        if pri.d_sd is not None:
            out[:, 1 : g.m + 1] = -(d - cast(float, pri.d_mean)) / pri.d_sd**2
        if pri.c_alpha is not None and g.kind.has_guessing:
            out[:, g.m + 1] = (pri.c_alpha - 1) / c - (cast(float, pri.c_beta) - 1) / (1 - c)
        free = free_scores(g, ak)
        if pri.ak_sd is not None and free is not None and free.shape[1]:
            out[:, g.width - free.shape[1] :] = pri.scores_gradient(free)
        return out

    def hessian(self, rho: FloatArray) -> FloatArray:
        """Central differences of the exact gradient, symmetrised."""
        return hessian_of_gradient(self.gradient, rho, self._steps(rho))

    def _steps(self, rho: FloatArray) -> FloatArray:
        """Difference steps relative to each coordinate's size, but at most a quarter of
        a graded threshold's distance to its neighbours, so they stay ordered."""
        steps = relative_steps(rho)
        at = 0
        for g in self.layout.groups:
            size = len(g.items) * g.width
            if g.kind.family.ordered_thresholds and g.m > 1:
                block = rho[at : at + size].reshape(len(g.items), g.width)
                gaps = np.diff(block[:, 1 : g.m + 1], axis=1)  # negative: d decreases
                room = np.full((len(g.items), g.m), np.inf)
                room[:, :-1] = np.minimum(room[:, :-1], -gaps)
                room[:, 1:] = np.minimum(room[:, 1:], -gaps)
                limit = np.full((len(g.items), g.width), np.inf)
                limit[:, 1 : g.m + 1] = room / 4
                steps[at : at + size] = np.minimum(steps[at : at + size], limit.ravel())
            at += size
        return steps

    def cross_product(self, rho: FloatArray) -> FloatArray:
        """Σ_p n_p s_p s_pᵀ of the per-pattern scores s_p (Fisher's identity per
        pattern), plus the prior's curvature."""
        naturals, est = self.step(rho)
        post = est.posterior
        blocks = []
        for g, (a, d, c, ak) in zip(self.layout.groups, naturals, strict=True):
            _, v = natural_derivatives(g, self.theta, a, d, c, ak)  # (Q, J_g, K, w)
            if g.kind.has_guessing:
                v[..., -1] *= (c * (1 - c))[None, :, None]
            q, j, k, w = v.shape
            expected = (post @ v.reshape(q, -1)).reshape(-1, j, k, w)
            chosen = self.patterns.onehot[:, g.cols]  # (P, J_g, K)
            blocks.append(np.einsum("pjk,pjkw->pjw", chosen, expected).reshape(len(post), -1))
        scores = np.hstack(blocks)
        info = (scores * self.patterns.counts[:, None]).T @ scores
        return np.asarray(info + self._prior_curvature(naturals))

    def _prior_curvature(self, naturals: Sequence[Natural]) -> FloatArray:
        """−∂² log prior/∂ρ², diagonal (the priors are independent)."""
        pri, diag = self.priors, []
        for g, (a, _, c, _) in zip(self.layout.groups, naturals, strict=True):
            block = np.zeros((len(a), g.width))
            if pri.a_sdlog is not None:
                la = np.log(a)
                z = (la - cast(float, pri.a_meanlog)) / pri.a_sdlog**2
                block[:, 0] = (1 / pri.a_sdlog**2 - 1 - z) / a**2
            if pri.a_sd is not None:
                block[:, 0] = 1 / pri.a_sd**2
            if pri.d_sd is not None:
                block[:, 1 : g.m + 1] = 1 / pri.d_sd**2
            if pri.c_alpha is not None and g.kind.has_guessing:
                block[:, g.m + 1] = (pri.c_alpha + cast(float, pri.c_beta) - 2) * c * (1 - c)
            n_free = g.kind.family.free_scores(g.m)
            if pri.ak_sd is not None and n_free:
                block[:, g.width - n_free :] = 1 / pri.ak_sd**2
            diag.append(block.ravel())
        return np.diag(np.concatenate(diag))


def item_widths(layout: Layout) -> list[int]:
    """Each item's number of parameters, in flat (group by group) order."""
    return [g.width for g in layout.groups for _ in g.items]


def shape_errors(
    layout: Layout,
    naturals: Sequence[Natural],
    item_ids: Sequence[str],
    info: FloatArray,
    cov: FloatArray,
    method: str,
) -> tuple[PolytomousStandardErrors, list[int]]:
    """The errors item by item in ``item_ids`` order from the information and covariance
    over ρ (flat, group by group), with the information reordered item by item; and
    that permutation from flat to item order."""
    se_flat = root_variance(np.diag(cov))
    n_items = len(item_ids)
    width = max(g.m for g in layout.groups)
    se_a, se_c = np.full(n_items, np.nan), np.full(n_items, np.nan)
    se_d = np.full((n_items, width), np.nan)
    se_ak = np.full((n_items, width), np.nan)
    item_of: list[int] = []
    labels_of: list[str] = []
    at = 0
    for g, (_, _, c, _) in zip(layout.groups, naturals, strict=True):
        block = se_flat[at : at + len(g.items) * g.width].reshape(len(g.items), g.width)
        at += block.size
        se_a[g.items] = block[:, 0]
        se_d[g.items, : g.m] = block[:, 1 : g.m + 1]
        if g.kind.has_guessing:
            se_c[g.items] = c * (1 - c) * block[:, g.m + 1]  # delta method from logit c
        free = g.kind.family.free_scores(g.m)
        if free:
            se_ak[g.items, :free] = block[:, g.width - free :]
        for j in g.items:
            item = item_ids[j]
            names = [f"{item}.a"] + [f"{item}.d{k}" for k in range(1, g.m + 1)]
            if g.kind.has_guessing:
                names.append(f"{item}.logit_c")
            names += [f"{item}.ak{k}" for k in range(1, free + 1)]
            item_of += [int(j)] * len(names)
            labels_of += names
    order = [int(k) for k in np.argsort(item_of, kind="stable")]
    labels = tuple(labels_of[k] for k in order)
    result = PolytomousStandardErrors(
        se_a, se_d, se_c, method, info[np.ix_(order, order)], labels, se_ak
    )
    return result, order


def standard_errors_at(
    objective: MarginalLogPosterior,
    naturals: Sequence[Natural],
    item_ids: Sequence[str],
    method: str,
) -> PolytomousStandardErrors:
    """Standard errors of the items at ``naturals`` by ``method`` (one of
    ``SE_METHODS``), reported item by item in ``item_ids`` order."""
    layout = objective.layout
    rho = to_reported(layout, naturals)
    info = -objective.hessian(rho) if method == "oakes" else objective.cross_product(rho)
    cov = invert_information(info, item_widths(layout))
    return shape_errors(layout, naturals, item_ids, info, cov, method)[0]


def polytomous_standard_errors(
    responses: PolytomousResponses,
    params: PolytomousParams,
    priors: PolytomousPriors | None = None,
    method: str = "oakes",
    n_quad: int = 61,
    bound: float = 6.0,
) -> PolytomousStandardErrors:
    """Standard errors of ``params`` (normally a fit's) on ``responses``: the inverse of
    the observed information of the marginal log posterior (``"oakes"``) or of the
    cross-product of per-subject scores (``"xpd"``); see the module docstring. ``priors``
    None means the calibrator's default for these item types
    (``PolytomousPriors.default_for``), so that a default fit's own errors come out."""
    if method not in SE_METHODS:
        raise IRTError(f"method must be one of {', '.join(SE_METHODS)}, got {method!r}")
    check_match(responses, params)
    layout = Layout.of(params.item_types, params.n_categories)
    grid = normal_grid(n_quad, bound)
    objective = MarginalLogPosterior(
        layout,
        Patterns.of(responses.values, layout),
        grid.points,
        grid.log_weights,
        priors if priors is not None else PolytomousPriors.default_for(params.item_types),
    )
    return standard_errors_at(objective, naturals_of(params, layout), params.item_ids, method)
