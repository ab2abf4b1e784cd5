"""Marginal maximum likelihood (Bayes modal with priors) for mixed pools — discrete items
(binary 2PL/3PL, graded, gpcm, sequential) and continuous items (CRM, Beta) — on one
θ ~ N(0, 1), by one Bock–Aitkin EM (Bock & Aitkin 1981).

Given θ the items are independent, so subject n's log-likelihood at node θ_q is the sum
of its discrete part's and its continuous part's. Each cycle's E-step computes both per
subject on the shared grid (``irt.quadrature.normal_grid``) — the discrete one as the
log-likelihood of the subject's response pattern (``irt.polytomous_estep.log_table``,
patterns mapped back to subjects), the continuous one from the exponential-family
coefficients (``irt.continuous_estep``) — adds them, and normalises once into the
posterior p_nq. Each family then gets its own expected statistics under that one
posterior — r_jkq = Σ_n 1[y_nj = k] p_nq for the discrete items, (N, S1, S2) for the
continuous ones — and runs its own M-step unchanged (``irt.polytomous_mstep.GroupMStep``,
``irt.continuous_mstep.m_step``). Both M-steps never lower their items' objectives, so
every cycle is a generalised EM step and the joint log posterior never falls. Cycles are
optionally accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3) over both
families' coordinates at once, the extrapolation kept only where it beats the plain
cycles' log posterior.

With one part only, the fit is that of ``PolytomousCalibrator`` or
``ContinuousCalibrator`` (to EM's tolerance). The calibrator computes no standard
errors: ``irt.mixed_se.fit_standard_errors`` gives them for a fit.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy import sparse

from irt.continuous import DEFAULT_EPSILON, ContinuousParams
from irt.continuous_em import assemble_params as assemble_continuous
from irt.continuous_em import reported_coordinates
from irt.continuous_estep import EStep as ContinuousEStep
from irt.continuous_estep import ScoreData, node_coefficients
from irt.continuous_estep import clip_internal as clip_continuous
from irt.continuous_kernels import check_epsilon
from irt.continuous_mstep import m_step as continuous_m_step
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_start import ItemTypes as ContinuousItemTypes
from irt.continuous_start import check_item_types as check_continuous_types
from irt.continuous_start import check_items as check_continuous_items
from irt.continuous_start import classical_start as continuous_classical_start
from irt.continuous_start import resolve_item_types as resolve_continuous_types
from irt.continuous_start import start_from as continuous_start_from
from irt.em_settings import check_em_settings
from irt.errors import ConvergenceWarning, IRTError
from irt.mixed import MixedParams, MixedResponses
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import assemble_params as assemble_discrete
from irt.polytomous_em import groups_log_prior
from irt.polytomous_estep import log_table
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
from irt.polytomous_start import ItemTypes as DiscreteItemTypes
from irt.polytomous_start import check_identified, classical_start, start_from
from irt.polytomous_start import resolve_item_types as resolve_discrete_types
from irt.quadrature import normal_grid
from irt.types import FloatArray

__all__ = ["MixedCalibrator"]

# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


class NodeLoglik(Protocol):
    """What the joint E-step needs of one family of items (``joint_e_step``; also used by
    ``irt.mixed_se`` and ``irt.mixed_scoring`` in their own coordinates)."""

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        """Each subject's log-likelihood at each node up to a constant (N, Q), and the
        constant summed over the subjects."""
        ...


class _Family(NodeLoglik, Protocol):
    """What the joint EM needs of one family of items; its state is a flat vector of
    the family's internal coordinates."""

    @property
    def n_parameters(self) -> int: ...

    def m_step(self, x: FloatArray, post: FloatArray) -> FloatArray: ...

    def log_prior(self, x: FloatArray) -> float: ...

    def reported(self, x: FloatArray) -> FloatArray: ...

    def clip(self, x: FloatArray) -> FloatArray: ...


@dataclass(frozen=True)
class _Discrete:
    """The discrete part: item groups, response patterns and each subject's pattern."""

    responses: PolytomousResponses
    types: list[ItemType]
    priors: PolytomousPriors
    layout: Layout
    patterns: Patterns
    to_patterns: Any  # sparse (P, N): subject n has pattern p
    steps: list[GroupMStep]
    theta: FloatArray
    max_newton: int
    inner_tol: float

    @classmethod
    def of(
        cls,
        responses: PolytomousResponses,
        item_types: DiscreteItemTypes,
        priors: PolytomousPriors | None,
        theta: FloatArray,
        max_newton: int,
        inner_tol: float,
    ) -> _Discrete:
        types = resolve_discrete_types(item_types, responses)
        pri = priors if priors is not None else PolytomousPriors.default_for(types)
        check_identified(responses, types, pri)
        layout = Layout.of(types, responses.n_categories)
        patterns = Patterns.of(responses.values, layout)
        n = responses.n_subjects
        to_patterns = sparse.csr_matrix(
            (np.ones(n), (patterns.inverse, np.arange(n))), shape=(patterns.counts.size, n)
        )
        steps = [GroupMStep(g, theta, pri) for g in layout.groups]
        return cls(
            responses,
            types,
            pri,
            layout,
            patterns,
            to_patterns,
            steps,
            theta,
            max_newton,
            inner_tol,
        )

    @property
    def n_parameters(self) -> int:
        return int(sum(len(g.items) * g.width for g in self.layout.groups))

    def start(self, start: PolytomousParams | None) -> FloatArray:
        if start is not None:
            naturals = start_from(start, self.responses, self.layout)
        else:
            naturals = classical_start(self.responses, self.layout, self.priors)
        log_slope = self.priors.log_slope
        return np.concatenate(
            [
                to_internal(g, *nat, log_slope).ravel()
                for g, nat in zip(self.layout.groups, naturals, strict=True)
            ]
        )

    def blocks(self, x: FloatArray) -> list[FloatArray]:
        out, at = [], 0
        for g in self.layout.groups:
            size = len(g.items) * g.width
            out.append(x[at : at + size].reshape(len(g.items), g.width))
            at += size
        return out

    def naturals(self, x: FloatArray) -> list[Natural]:
        log_slope = self.priors.log_slope
        return [
            to_natural(g, p, log_slope)
            for g, p in zip(self.layout.groups, self.blocks(x), strict=True)
        ]

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        table = log_table(self.layout, self.naturals(x), self.theta)
        per_pattern = self.patterns.onehot @ table  # (P, Q)
        return per_pattern[self.patterns.inverse], 0.0

    def m_step(self, x: FloatArray, post: FloatArray) -> FloatArray:
        # r_cq = Σ_n 1[subject n's pattern has pair c] p_nq, via the patterns' sums.
        counts = self.patterns.onehot.T @ np.asarray(self.to_patterns @ post)
        out = []
        for st, p in zip(self.steps, self.blocks(x), strict=True):
            r = counts[st.group.cols].transpose(2, 0, 1)  # (Q, J_g, K)
            out.append(st.run(p, r, self.max_newton, self.inner_tol).ravel())
        return np.concatenate(out)

    def log_prior(self, x: FloatArray) -> float:
        return groups_log_prior(self.priors, self.layout, self.naturals(x))

    def reported(self, x: FloatArray) -> FloatArray:
        return to_reported(self.layout, self.naturals(x))

    def clip(self, x: FloatArray) -> FloatArray:
        log_slope = self.priors.log_slope
        return np.concatenate(
            [
                clip_internal(g, p, log_slope).ravel()
                for g, p in zip(self.layout.groups, self.blocks(x), strict=True)
            ]
        )

    def params(self, x: FloatArray) -> PolytomousParams:
        return assemble_discrete(self.responses, self.types, self.layout, self.naturals(x), None)


@dataclass(frozen=True)
class _Continuous:
    """The continuous part: the scores' sufficient statistics and item types."""

    responses: ContinuousResponses
    data: ScoreData
    priors: ContinuousPriors
    epsilon: float
    theta: FloatArray
    max_newton: int
    inner_tol: float

    @classmethod
    def of(
        cls,
        responses: ContinuousResponses,
        item_types: ContinuousItemTypes | None,
        priors: ContinuousPriors | None,
        epsilon: float,
        theta: FloatArray,
        max_newton: int,
        inner_tol: float,
    ) -> _Continuous:
        if item_types is None:
            raise IRTError("the pool has continuous items: give continuous_types (crm or beta)")
        is_crm = resolve_continuous_types(item_types, responses)
        pri = priors if priors is not None else ContinuousPriors()
        check_continuous_items(responses, is_crm, pri, epsilon)
        data = ScoreData.of(responses, is_crm, epsilon)
        return cls(responses, data, pri, epsilon, theta, max_newton, inner_tol)

    @property
    def n_parameters(self) -> int:
        return 3 * self.responses.n_items

    def psi(self, x: FloatArray) -> FloatArray:
        return x.reshape(-1, 3)

    def start(self, start: ContinuousParams | None) -> FloatArray:
        is_crm = self.data.is_crm
        if start is not None:
            return continuous_start_from(start, self.responses, is_crm).ravel()
        return continuous_classical_start(self.responses, is_crm, self.epsilon).ravel()

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        d = self.data
        a_c, b_c, c_c = node_coefficients(self.psi(x), d.is_crm, self.theta)
        return d.obs @ a_c + d.t1 @ b_c + d.t2 @ c_c, float(d.log_jac.sum())

    def m_step(self, x: FloatArray, post: FloatArray) -> FloatArray:
        d = self.data
        est = ContinuousEStep(np.nan, d.obs.T @ post, d.t1.T @ post, d.t2.T @ post, post)
        new = continuous_m_step(
            self.psi(x), est, self.theta, d.is_crm, self.priors, self.max_newton, self.inner_tol
        )
        return new.ravel()

    def log_prior(self, x: FloatArray) -> float:
        return float(self.priors.log_density(self.psi(x), self.data.is_crm).sum())

    def reported(self, x: FloatArray) -> FloatArray:
        # (a, d, log σ or τ), as ContinuousCalibrator judges
        return reported_coordinates(self.psi(x), self.data.is_crm).ravel()

    def clip(self, x: FloatArray) -> FloatArray:
        return clip_continuous(self.psi(x), self.data.is_crm).ravel()

    def params(self, x: FloatArray) -> ContinuousParams:
        return assemble_continuous(
            self.responses, self.data.is_crm, self.psi(x), self.epsilon, None
        )


@dataclass(frozen=True)
class _EStep:
    loglik: float
    posterior: FloatArray  # (N, Q)


def joint_e_step(
    families: Sequence[NodeLoglik], xs: Sequence[FloatArray], log_w: FloatArray
) -> _EStep:
    """The posterior of every subject over the nodes given all its answers, and the
    joint marginal log-likelihood Σ_n log Σ_q w_q Π_families L_n(θ_q)."""
    joint: FloatArray | None = None
    const = 0.0
    for fam, x in zip(families, xs, strict=True):
        table, c = fam.node_loglik(x)
        joint = table.copy() if joint is None else joint + table
        const += c
    assert joint is not None
    joint += log_w
    top = joint.max(axis=1, keepdims=True)
    post = np.exp(joint - top)
    total = post.sum(axis=1, keepdims=True)
    post /= total
    return _EStep(float((top + np.log(total)).sum()) + const, post)


class MixedCalibrator:
    """Fit a mixed pool (``MixedResponses``) of discrete and continuous items on one
    θ ~ N(0, 1) by one EM.

    ``discrete_types``: as ``PolytomousCalibrator``'s ``item_types`` (None: 2PL for two
    categories, graded for more). ``continuous_types``: as ``ContinuousCalibrator``'s
    (needed when there are continuous items). ``discrete_priors`` None gives
    ``PolytomousPriors.default_for`` (a Beta prior on c when there are 3PL items);
    ``continuous_priors`` None is plain ML. Continuous scores are clipped to
    [``epsilon``, 1 − ``epsilon``]. ``n_quad`` points on [−``bound``, ``bound``]; EM
    stops when no reported parameter of either family moves more than ``tol`` in a
    cycle, or after ``max_iter`` cycles with a ``ConvergenceWarning``. ``squarem``
    accelerates the cycles. ``standard_errors`` must be None (for errors of a fit, see
    ``irt.mixed_se.fit_standard_errors``).

    ``fit(responses)`` sets ``params_`` (``MixedParams``), ``loglik_`` (the joint
    marginal log-likelihood, continuous scores on the x scale), ``logpost_`` (plus both
    families' log priors), ``trace_`` (the log posterior after every cycle kept),
    ``n_iter_`` (EM maps), ``converged_``, ``n_parameters_``, ``aic_``, ``bic_`` (n =
    subjects with an answer), ``discrete_priors_``, ``continuous_priors_`` and
    ``seconds_``.
    """

    def __init__(
        self,
        discrete_types: DiscreteItemTypes = None,
        continuous_types: ContinuousItemTypes | None = None,
        *,
        discrete_priors: PolytomousPriors | None = None,
        continuous_priors: ContinuousPriors | None = None,
        epsilon: float = DEFAULT_EPSILON,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
        squarem: bool = True,
        standard_errors: str | None = None,
    ) -> None:
        check_em_settings(
            tol=tol,
            max_iter=max_iter,
            max_newton=max_newton,
            standard_errors=None,
            se_methods=(),
            n_quad=n_quad,
            bound=bound,
        )
        if standard_errors is not None:
            raise IRTError(
                f"standard errors of mixed pools are not implemented in the calibrator (got "
                f"{standard_errors!r}); use standard_errors=None and "
                "irt.mixed_se.fit_standard_errors on the fit"
            )
        if continuous_types is not None and not isinstance(continuous_types, Mapping):
            check_continuous_types(continuous_types)
        self.discrete_types = discrete_types
        self.continuous_types = continuous_types
        self.discrete_priors = discrete_priors
        self.continuous_priors = continuous_priors
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
        dp = getattr(self, "discrete_priors_", self.discrete_priors)
        cp = getattr(self, "continuous_priors_", self.continuous_priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM" + (" + SQUAREM" if self.squarem else ""),
            "epsilon": self.epsilon,
            "n_quad": self.n_quad,
            "bound": self.bound,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "standard_errors": None,
            "discrete_priors": None if dp is None else dp.describe(),
            "continuous_priors": None if cp is None else cp.describe(),
        }
        if hasattr(self, "params_"):
            kinds = [
                t.value
                for p in (self.params_.discrete, self.params_.continuous)
                if p is not None
                for t in p.item_types
            ]
            out["item_types"] = {k: kinds.count(k) for k in sorted(set(kinds))}
        return out

    def fit(self, responses: MixedResponses, start: MixedParams | None = None) -> MixedCalibrator:
        """Estimate every item's parameters from ``responses`` (missing answers are left
        out of the likelihood); ``start`` must cover the same items in the same parts."""
        t0 = time.perf_counter()
        if not isinstance(responses, MixedResponses):
            raise IRTError(f"fit needs MixedResponses, got {type(responses).__name__}")
        if start is not None and start.item_ids != responses.item_ids:
            raise IRTError("the start values must list the responses' items, in the same parts")
        grid = normal_grid(self.n_quad, self.bound)
        inner_tol = min(self.tol / 10, 1e-6)
        families: list[_Family] = []
        xs: list[FloatArray] = []
        disc: _Discrete | None = None
        cont: _Continuous | None = None
        if responses.discrete is not None:
            disc = _Discrete.of(
                responses.discrete,
                self.discrete_types,
                self.discrete_priors,
                grid.points,
                self.max_newton,
                inner_tol,
            )
            families.append(disc)
            xs.append(disc.start(None if start is None else start.discrete))
        if responses.continuous is not None:
            cont = _Continuous.of(
                responses.continuous,
                self.continuous_types,
                self.continuous_priors,
                self.epsilon,
                grid.points,
                self.max_newton,
                inner_tol,
            )
            families.append(cont)
            xs.append(cont.start(None if start is None else start.continuous))
        self.trace_: list[float] = []
        converged, n_iter, xs, est = self._iterate(families, xs, grid.log_weights)
        if not converged:
            warnings.warn(
                f"mixed EM stopped at its cap of {self.max_iter} cycles before the item "
                f"parameters settled (tolerance {self.tol})",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.params_ = MixedParams(
            discrete=None if disc is None else disc.params(xs[0]),
            continuous=None if cont is None else cont.params(xs[-1]),
        )
        self.loglik_ = est.loglik
        self.logpost_ = est.loglik + _log_prior(families, xs)
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_parameters_ = int(sum(f.n_parameters for f in families))
        n_subjects = int(responses.observed.any(axis=1).sum())
        self.aic_ = -2.0 * self.loglik_ + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * self.loglik_ + self.n_parameters_ * float(np.log(n_subjects))
        self.discrete_priors_ = None if disc is None else disc.priors
        self.continuous_priors_ = None if cont is None else cont.priors
        self.seconds_ = time.perf_counter() - t0
        return self

    def _iterate(
        self, families: list[_Family], xs: list[FloatArray], log_w: FloatArray
    ) -> tuple[bool, int, list[FloatArray], _EStep]:
        """EM cycles, with SQUAREM if asked: two plain cycles x0 → x1 → x2 give
        r = x1 − x0 and v = x2 − x1 − r; the point x0 − 2αr + α²v, α = −|r|/|v|, replaces
        x2 only if its log posterior is higher. Convergence is judged on plain steps."""
        sizes = np.cumsum([x.size for x in xs])[:-1]

        def objective(est: _EStep, x: list[FloatArray]) -> float:
            return est.loglik + _log_prior(families, x)

        def em_map(est: _EStep, x: list[FloatArray]) -> list[FloatArray]:
            return [f.m_step(p, est.posterior) for f, p in zip(families, x, strict=True)]

        def e_step(x: list[FloatArray]) -> _EStep:
            return joint_e_step(families, x, log_w)

        def change(new: list[FloatArray], old: list[FloatArray]) -> float:
            return max(
                float(np.abs(f.reported(a) - f.reported(b)).max(initial=0.0))
                for f, a, b in zip(families, new, old, strict=True)
            )

        def unflat(v: FloatArray) -> list[FloatArray]:
            return [f.clip(p) for f, p in zip(families, np.split(v, sizes), strict=True)]

        psi = xs
        est0 = e_step(psi)
        self.trace_.append(objective(est0, psi))
        n_maps = 0
        while n_maps < self.max_iter:
            x1 = em_map(est0, psi)
            n_maps += 1
            est1 = e_step(x1)
            self.trace_.append(objective(est1, x1))
            moved = change(x1, psi)
            if moved < self.tol or n_maps >= self.max_iter:
                return moved < self.tol, n_maps, x1, est1
            if not self.squarem:
                psi, est0 = x1, est1
                continue
            x2 = em_map(est1, x1)
            n_maps += 1
            est2 = e_step(x2)
            moved = change(x2, x1)
            x0, psi, est0 = psi, x2, est2
            best = objective(est2, x2)
            if moved >= self.tol:
                f0, f1, f2 = (np.concatenate(x) for x in (x0, x1, x2))
                r, v = f1 - f0, f2 - 2 * f1 + f0
                v_norm = float(np.sqrt(v @ v))
                alpha = -1.0
                if v_norm > 0:
                    alpha = max(-float(np.sqrt(r @ r)) / v_norm, -_MAX_EXTRAPOLATION)
                if alpha < -1.0:
                    trial = unflat(f0 - 2 * alpha * r + alpha**2 * v)
                    trial_est = e_step(trial)
                    value = objective(trial_est, trial)
                    if value > best:
                        psi, est0, best = trial, trial_est, value
            self.trace_.append(best)
            if moved < self.tol:
                return True, n_maps, psi, est0
        return False, n_maps, psi, est0


def _log_prior(families: Sequence[_Family], xs: Sequence[FloatArray]) -> float:
    return sum(f.log_prior(x) for f, x in zip(families, xs, strict=True))
