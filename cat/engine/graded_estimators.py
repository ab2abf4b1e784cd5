"""Ability estimators for pools of scored items (graded, partial-credit, sequential and
binary items mixed), each vectorised over a batch of examinees.

They read θ̂ off each examinee's log-likelihood on the grid of a ``ScoreTable``: the
posterior mean and SD (EAP), or the grid's best point refined by the parabola through
it and its neighbours (MAP, ML). The ML estimate does not exist while every answer
sits in its item's lowest category, or every answer in its highest, so ML falls back
to MAP until then, as the binary ``MLEstimator`` does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from cat.engine.score_table import ScoreTable
from cat.errors import CatError
from irt.types import BoolArray, FloatArray, IntArray


@dataclass(frozen=True)
class GradedAnswers:
    """The items given to E examinees (positions, −1 = none yet) and their scores, (E, L),
    on the pool of ``table``."""

    table: ScoreTable
    items: IntArray
    scores: FloatArray

    @property
    def given(self) -> BoolArray:
        return np.asarray(self.items >= 0)

    def rows(self, keep: BoolArray | IntArray) -> GradedAnswers:
        return GradedAnswers(self.table, self.items[keep], self.scores[keep])

    def log_likelihood(self) -> FloatArray:
        given = self.given
        return self.table.log_likelihood(np.where(given, self.items, 0), self.scores, given)

    def information_at(self, theta: FloatArray) -> FloatArray:
        given = self.given
        return self.table.information_at(np.where(given, self.items, 0), given, theta)

    def at_an_end(self) -> BoolArray:
        """True where every answer is its item's lowest score, or every one its highest
        (or there is none): no maximum likelihood estimate exists. A continuous score
        has a density whose maximum over θ is finite whatever the score, so one
        continuous answer is enough."""
        given = self.given
        positions = np.where(given, self.items, 0)
        top = self.table.max_scores[positions]
        all_low = np.all(~given | (self.scores == 0), axis=1)
        all_high = np.all(~given | (self.scores == top), axis=1)
        continuous = np.any(given & (positions >= self.table.n_discrete), axis=1)
        return np.asarray((all_low | all_high) & ~continuous)


class GradedEstimator(ABC):
    """θ̂ and its standard error for each examinee of a batch."""

    @abstractmethod
    def estimate(self, answers: GradedAnswers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``start`` (E,) is the previous estimate; the grid needs no warm start."""


def _log_prior(grid: FloatArray, mean: float, sd: float) -> FloatArray:
    return np.asarray(-0.5 * ((grid - mean) / sd) ** 2)


def _check_prior(sd: float) -> None:
    if not sd > 0:
        raise CatError(f"prior_sd must be positive, got {sd}")


def _grid_mode(values: FloatArray, grid: FloatArray) -> FloatArray:
    """Each row's maximiser: the best grid point moved to the vertex of the parabola
    through it and its neighbours (kept within half a step of it)."""
    best = values.argmax(axis=1)
    inner = np.clip(best, 1, grid.size - 2)
    rows = np.arange(values.shape[0])
    left, mid, right = (values[rows, inner + k] for k in (-1, 0, 1))
    curvature = left - 2 * mid + right
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(curvature < 0, 0.5 * (left - right) / curvature, 0.0)
    step = grid[1] - grid[0]
    theta = grid[best] + np.where(best == inner, np.clip(shift, -0.5, 0.5) * step, 0.0)
    return np.asarray(theta)


@dataclass(frozen=True)
class GradedEAP(GradedEstimator):
    """Posterior mean and SD under N(prior_mean, prior_sd²), summed over the grid."""

    prior_mean: float = 0.0
    prior_sd: float = 1.0

    def __post_init__(self) -> None:
        _check_prior(self.prior_sd)

    def estimate(self, answers: GradedAnswers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        grid = answers.table.grid
        log_post = answers.log_likelihood() + _log_prior(grid, self.prior_mean, self.prior_sd)
        w = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        mean = w @ grid
        var = w @ grid**2 - mean**2
        return mean, np.sqrt(np.maximum(var, 1e-24))


@dataclass(frozen=True)
class GradedMAP(GradedEstimator):
    """Posterior mode under N(prior_mean, prior_sd²); SE from the test information plus
    the prior's precision."""

    prior_mean: float = 0.0
    prior_sd: float = 1.0

    def __post_init__(self) -> None:
        _check_prior(self.prior_sd)

    def estimate(self, answers: GradedAnswers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        grid = answers.table.grid
        log_post = answers.log_likelihood() + _log_prior(grid, self.prior_mean, self.prior_sd)
        theta = _grid_mode(log_post, grid)
        info = answers.information_at(theta) + 1.0 / self.prior_sd**2
        return theta, 1.0 / np.sqrt(info)


@dataclass(frozen=True)
class GradedML(GradedEstimator):
    """Maximum likelihood within the grid's bounds; SE = 1/sqrt(test information).
    ``fallback`` serves while every answer is at its item's lowest, or every one at its
    highest, score."""

    fallback: GradedEstimator = field(default_factory=GradedMAP)

    def estimate(self, answers: GradedAnswers, start: FloatArray) -> tuple[FloatArray, FloatArray]:
        theta = np.empty(len(start))
        se = np.empty(len(start))
        end = answers.at_an_end()
        if end.any():
            theta[end], se[end] = self.fallback.estimate(answers.rows(end), start[end])
        if not end.all():
            mixed = answers.rows(~end)
            t = _grid_mode(mixed.log_likelihood(), answers.table.grid)
            theta[~end] = t
            se[~end] = 1.0 / np.sqrt(np.maximum(mixed.information_at(t), 1e-12))
        return theta, se
