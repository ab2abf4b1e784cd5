"""Scores θ of the subjects of a polytomous response matrix under a pool of mixed items
(``irt.polytomous``) with θ ~ N(prior_mean, prior_sd²): EAP by quadrature, as R mirt's
``fscores``, or MAP by safeguarded Newton steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from irt.errors import IRTError
from irt.estimation.scoring import (
    NormalPrior,
    eap_on_grid,
    grid_mode,
    mode_sd,
    posterior_mode,
)
from irt.polytomous import PolytomousParams, curves
from irt.polytomous_estep import log_table
from irt.polytomous_layout import Layout, Natural, Patterns, check_match, naturals_of
from irt.polytomous_responses import PolytomousResponses
from irt.quadrature import normal_on
from irt.structures import Grid
from irt.types import FloatArray, IntArray

__all__ = ["PolytomousScores", "polytomous_scores"]


@dataclass(frozen=True)
class PolytomousScores:
    """θ per subject and its posterior SD (EAP) or the SD of the normal approximation
    at the mode (MAP: 1/√(−∂² log posterior/∂θ²)), with how many items each answered."""

    subject_ids: tuple[str, ...]
    theta: FloatArray
    sd: FloatArray
    method: str
    n_answered: IntArray


def polytomous_scores(
    responses: PolytomousResponses,
    params: PolytomousParams,
    method: str = "eap",
    *,
    n_quad: int = 121,
    bound: float = 6.0,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> PolytomousScores:
    """EAP (posterior mean and SD by quadrature; R mirt's ``fscores`` default of 121
    points on [−6, 6]) or MAP (posterior mode by safeguarded Newton steps from the best
    grid point) of θ ~ N(prior_mean, prior_sd²) under a pool of mixed items, by the
    shared estimators of ``irt.estimation.scoring``."""
    kind = method.lower()
    if kind not in ("eap", "map"):
        raise IRTError(f"method must be 'eap' or 'map', got {method!r}")
    if not prior_sd > 0:
        raise IRTError(f"prior_sd must be positive, got {prior_sd}")
    check_match(responses, params)
    layout = Layout.of(params.item_types, params.n_categories)
    patterns = Patterns.of(responses.values, layout)
    likelihood = _PatternLikelihood(patterns.onehot, layout, naturals_of(params, layout))
    grid = normal_on(np.linspace(-bound, bound, n_quad), prior_mean, prior_sd)
    mean, sd = eap_on_grid(likelihood.at_nodes(grid.points), Grid.of(grid.points, grid.log_weights))
    if kind == "map":
        prior = NormalPrior(prior_mean, prior_sd)
        mean = posterior_mode(
            likelihood, grid_mode(likelihood, (-bound, bound), prior), (-bound, bound), prior
        )
        sd = mode_sd(likelihood, mean, prior)
    idx = patterns.inverse
    return PolytomousScores(
        subject_ids=responses.subject_ids,
        theta=mean[idx],
        sd=sd[idx],
        method=kind,
        n_answered=responses.observed.sum(axis=1).astype(np.int_),
    )


@dataclass(frozen=True)
class _PatternLikelihood:
    """Each distinct response pattern's log-likelihood as a function of its own θ (the
    ``SubjectLikelihood`` of ``irt.estimation.scoring``); the information is the
    observed one, −ℓ'', a central difference of the exact slope."""

    onehot: FloatArray  # (patterns, columns): 1 at each answered category
    layout: Layout
    naturals: Sequence[Natural]

    def rows(self, index: IntArray) -> _PatternLikelihood:
        return replace(self, onehot=self.onehot[index])

    def at_nodes(self, nodes: FloatArray) -> FloatArray:
        return np.asarray(self.onehot @ log_table(self.layout, self.naturals, nodes))

    def at(self, theta: FloatArray) -> FloatArray:
        log_p = np.empty((theta.size, self.layout.n_columns))
        for g, (a, d, c, ak) in zip(self.layout.groups, self.naturals, strict=True):
            log_p[:, g.cols.ravel()] = curves(g.kind, theta, a, d, c, ak=ak).log_p.reshape(
                theta.size, -1
            )
        return np.asarray((self.onehot * log_p).sum(axis=1))

    def score_information(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        h = 1e-5
        curvature = (self._value_and_score(theta + h)[1] - self._value_and_score(theta - h)[1]) / (
            2 * h
        )
        return self._value_and_score(theta)[1], -curvature

    def _value_and_score(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        log_p = np.empty((theta.size, self.layout.n_columns))
        score = np.empty_like(log_p)
        for g, (a, d, c, ak) in zip(self.layout.groups, self.naturals, strict=True):
            cv = curves(g.kind, theta, a, d, c, ak=ak, derivatives=True)
            assert cv.slope is not None
            log_p[:, g.cols.ravel()] = cv.log_p.reshape(theta.size, -1)
            score[:, g.cols.ravel()] = (a[None, :, None] * cv.slope).reshape(theta.size, -1)
        return (self.onehot * log_p).sum(axis=1), (self.onehot * score).sum(axis=1)
