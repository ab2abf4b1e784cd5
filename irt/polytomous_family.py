"""Discrete items (binary 2PL/3PL, graded, gpcm, sequential) as one family of the EM on
one θ (``irt.mixed_joint``): the family's flat vector is its items' internal coordinates
ψ group by group (``irt.polytomous_layout``), its node log-likelihood the log-likelihood
of each response pattern at each node (``irt.polytomous_estep.log_table``), and its
M-step Fisher scoring per group of like items (``irt.polytomous_mstep.GroupMStep``) on
the expected counts r_jkq under the posterior the joint E-step gives.

The E-step's rows are the distinct response patterns, weighted by how many subjects
gave each, when the family is alone (``PolytomousCalibrator``: the patterns are far
fewer than the subjects); beside another family they are the subjects, since the other
family's answers tell subjects with one pattern apart (``MixedCalibrator``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from irt.estimation.arrays import Array, is_numpy, permute, to_numpy
from irt.estimation.devices import HOST, Backend
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_estep import log_table
from irt.polytomous_layout import (
    Layout,
    Natural,
    Patterns,
    clip_internal,
    free_scores,
    to_internal,
    to_natural,
    to_reported,
)
from irt.polytomous_mstep import GroupMStep
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_products import PatternProducts
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_se import MarginalLogPosterior, PolytomousStandardErrors, standard_errors_at
from irt.polytomous_start import (
    ItemTypes,
    check_identified,
    classical_start,
    resolve_item_types,
    start_from,
)
from irt.response_table import row_blocks
from irt.types import FloatArray

#: On the host an M-step takes a group's items in pieces of about this many cells of
#: its (nodes, items, scores, coordinates²) arrays, which then stay in cache.
MSTEP_CELLS = 2**20

__all__ = ["MSTEP_CELLS", "PolytomousFamily", "assemble_params", "groups_log_prior", "subject_sums"]


@dataclass(frozen=True)
class PolytomousFamily:
    """The discrete items of a pool: their groups, response patterns and M-steps.
    ``to_subjects`` is None when the E-step's rows are the patterns, else the sparse
    (P, N) map that sums subjects' posteriors by pattern."""

    responses: PolytomousResponses
    types: tuple[ItemType, ...]
    priors: PolytomousPriors
    layout: Layout
    patterns: Patterns
    to_subjects: Any
    steps: tuple[GroupMStep, ...]
    theta: FloatArray
    products: PatternProducts
    #: The nodes on the backend (``theta`` itself on the host).
    nodes: Array

    @classmethod
    def of(
        cls,
        responses: PolytomousResponses,
        item_types: ItemTypes,
        priors: PolytomousPriors | None,
        theta: FloatArray,
        *,
        by_subject: bool = False,
        backend: Backend = HOST,
    ) -> PolytomousFamily:
        """The family of ``responses``: item types resolved (R mirt's defaults where not
        given), ``priors`` None for ``PolytomousPriors.default_for`` those types, and
        refused with one line where an item is not identified. A cycle's curves, its
        E-step's two products over the patterns (``irt.polytomous_products``) and its
        M-step run on ``backend``; the posterior, the acceleration and the standard errors
        on the host."""
        types = resolve_item_types(item_types, responses)
        pri = priors if priors is not None else PolytomousPriors.default_for(types)
        check_identified(responses, types, pri)
        layout = Layout.of(types, responses.n_categories)
        patterns = Patterns.of(responses.values, layout)
        to_subjects = subject_sums(patterns) if by_subject else None
        nodes = backend.asarray(theta)
        steps = tuple(GroupMStep(g, nodes, pri) for g in layout.groups)
        products = PatternProducts.of(patterns, backend)
        return cls(
            responses,
            tuple(types),
            pri,
            layout,
            patterns,
            to_subjects,
            steps,
            theta,
            products,
            nodes,
        )

    @property
    def n_parameters(self) -> int:
        return int(sum(len(g.items) * g.width for g in self.layout.groups))

    @property
    def row_weights(self) -> FloatArray | None:
        """Subjects per row of the E-step: the patterns' counts, or None (one each)."""
        return self.patterns.counts if self.to_subjects is None else None

    def start(self, start: PolytomousParams | None) -> FloatArray:
        """ψ from ``start``'s parameters, or from classical statistics if None."""
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
        """ψ of each group, (J_g, width)."""
        out, at = [], 0
        for g in self.layout.groups:
            size = len(g.items) * g.width
            out.append(x[at : at + size].reshape(len(g.items), g.width))
            at += size
        return out

    def naturals(self, x: FloatArray, backend: Backend = HOST) -> list[Natural]:
        """(a, d, c, ak) of each group at ``x``, as ``backend``'s arrays."""
        log_slope = self.priors.log_slope
        return [
            to_natural(g, backend.asarray(p), log_slope)
            for g, p in zip(self.layout.groups, self.blocks(x), strict=True)
        ]

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        naturals = self.naturals(x, self.products.backend)
        per_pattern = self.products.log_likelihood(log_table(self.layout, naturals, self.nodes))
        if self.to_subjects is None:
            return per_pattern, 0.0
        return per_pattern[self.patterns.inverse], 0.0

    def m_step(
        self, x: FloatArray, post: FloatArray, max_newton: int, inner_tol: float
    ) -> FloatArray:
        # r_cq = Σ_n 1[subject n's pattern has pair c] p_nq, via the patterns' sums.
        if self.to_subjects is None:
            by_pattern = post * self.patterns.counts[:, None]
        else:
            by_pattern = np.asarray(self.to_subjects @ post)
        counts = self.products.counts(by_pattern)
        to_backend = self.products.backend.asarray
        out = []
        for st, p in zip(self.steps, self.blocks(x), strict=True):
            r = permute(counts[st.group.cols], (2, 0, 1))  # (Q, J_g, K)
            if not is_numpy(r):  # a device: all the group's items at once
                out.append(to_numpy(st.run(to_backend(p), r, max_newton, inner_tol)).ravel())
                continue
            # On the processors, items a cache-sized piece at a time: each item's steps
            # are its own, so the pieces give what the whole group would.
            cells = r.shape[0] * r.shape[2] * st.group.width**2
            for rows in row_blocks(len(p), max(1, MSTEP_CELLS // cells)):
                out.append(st.run(p[rows], r[:, rows], max_newton, inner_tol).ravel())
        return np.concatenate(out)

    def log_prior(self, x: FloatArray) -> float:
        return groups_log_prior(self.priors, self.layout, self.naturals(x))

    def reported(self, x: FloatArray) -> FloatArray:
        """ρ = (a, d's, logit c): the coordinates EM's convergence is judged on."""
        return to_reported(self.layout, self.naturals(x))

    def clip(self, x: FloatArray) -> FloatArray:
        log_slope = self.priors.log_slope
        return np.concatenate(
            [
                clip_internal(g, p, log_slope).ravel()
                for g, p in zip(self.layout.groups, self.blocks(x), strict=True)
            ]
        )

    def standard_errors(
        self, x: FloatArray, log_w: FloatArray, method: str
    ) -> PolytomousStandardErrors:
        """Standard errors at ``x`` by ``method`` (``irt.polytomous_se``), on the grid
        of the family's nodes with log weights ``log_w``."""
        objective = MarginalLogPosterior(self.layout, self.patterns, self.theta, log_w, self.priors)
        return standard_errors_at(objective, self.naturals(x), self.responses.item_ids, method)

    def params(self, x: FloatArray, se: PolytomousStandardErrors | None = None) -> PolytomousParams:
        return assemble_params(self.responses, self.types, self.layout, self.naturals(x), se)


def subject_sums(patterns: Patterns) -> Any:
    """The sparse (P, N) matrix that sums the subjects' rows by response pattern."""
    n = patterns.inverse.size
    return sparse.csr_matrix(
        (np.ones(n), (patterns.inverse, np.arange(n))), shape=(patterns.counts.size, n)
    )


def groups_log_prior(
    priors: PolytomousPriors, layout: Layout, naturals: Sequence[Natural]
) -> float:
    """``PolytomousPriors.log_prior`` of the groups' (a, d, c), without assembling (and
    validating) a ``PolytomousParams`` at every SQUAREM trial."""
    return sum(
        float(priors.log_density(a, d, c, g.kind.has_guessing, free_scores(g, ak)).sum())
        for g, (a, d, c, ak) in zip(layout.groups, naturals, strict=True)
    )


def assemble_params(
    responses: PolytomousResponses,
    types: Sequence[ItemType],
    layout: Layout,
    naturals: Sequence[Natural],
    se: PolytomousStandardErrors | None,
) -> PolytomousParams:
    """The fit's parameters, item by item, from the groups' (a, d, c, ak) and their
    standard errors."""
    n_items = responses.n_items
    a, c = np.zeros(n_items), np.zeros(n_items)
    d = np.full((n_items, max(responses.n_categories) - 1), np.nan)
    ak = np.full_like(d, np.nan)
    for g, (ga, gd, gc, gak) in zip(layout.groups, naturals, strict=True):
        a[g.items], d[g.items, : g.m], c[g.items] = ga, gd, gc
        if gak is not None:
            ak[g.items, : g.m] = gak
    return PolytomousParams(
        item_ids=responses.item_ids,
        item_types=tuple(types),
        a=a,
        d=d,
        c=c,
        se_a=None if se is None else se.a,
        se_d=None if se is None else se.d,
        se_c=None if se is None else se.c,
        ak=ak,
        se_ak=None if se is None else se.ak,
    )
