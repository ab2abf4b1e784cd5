"""A pool of scored items (``irt.polytomous``: graded, partial-credit, sequential and
binary items on one θ; with ``irt.mixed``, continuous items too) tabulated for the
adaptive test: log P(X_j = k | θ) and the item information on one θ grid.

An examinee's log-likelihood on the grid is then a sum of table rows, one per answer,
whatever the items' models (a continuous answer's row is made from its item's three
rows, ``cat.engine.continuous_rows``); the estimators of ``cat.engine.graded_estimators`` read
θ̂ off it. A grid step of 0.05 keeps the posterior mean exact to far below its SD
(the discrete sum of a normal density errs by about exp(−2π²σ²/h²), under 1e-8
for a posterior SD σ of 0.1 after hundreds of graded items) and lets a parabola
through the three best points place the mode within about 1e-4.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from cat.engine.continuous_rows import ContinuousRows
from irt.mixed import MixedParams
from irt.polytomous import PolytomousParams
from irt.types import BoolArray, FloatArray, IntArray

#: What a score table tabulates: scored items, or scored and continuous ones.
ScoredParams = PolytomousParams | MixedParams

#: Items tabulated at a time: bounds the float64 temporaries on a large pool.
_BLOCK = 2048


@dataclass(frozen=True)
class ScoreTable:
    """``log_p[j * width + k, g]`` = log P(X_j = k | grid_g) of the discrete items (−inf
    beyond item j's categories) and ``info[j, g]`` = I_j(grid_g) of every item, both
    float32, each with a last row of zeros that an unanswered column reads. The
    continuous items of a mixed pool, after the discrete ones, are in ``continuous``."""

    params: ScoredParams
    grid: FloatArray  # (G,)
    log_p: npt.NDArray[np.float32]  # (J_discrete * width + 1, G)
    info: npt.NDArray[np.float32]  # (J + 1, G)
    width: int  # the most categories of any discrete item
    continuous: ContinuousRows | None = None

    @classmethod
    def build(cls, params: ScoredParams, step: float = 0.05, bound: float = 6.0) -> ScoreTable:
        grid = np.arange(-bound, bound + step / 2, step)
        parts = MixedParams.of(params)  # the discrete items, then the continuous ones
        discrete = parts.discrete
        n_disc = 0 if discrete is None else discrete.n_items
        width = 1 if discrete is None else int(discrete.n_categories.max())
        log_p = np.empty((n_disc, width, grid.size), dtype=np.float32)
        info = np.empty((params.n_items, grid.size), dtype=np.float32)
        for lo in range(0, n_disc, _BLOCK):
            assert discrete is not None
            block = discrete.subset(np.arange(lo, min(lo + _BLOCK, n_disc)))
            k = int(block.n_categories.max())
            log_p[lo : lo + block.n_items, :k] = block.log_probs(grid).transpose(1, 2, 0)
            log_p[lo : lo + block.n_items, k:] = -np.inf
            info[lo : lo + block.n_items] = block.information(grid).T
        rows = None
        if parts.continuous is not None:
            rows = ContinuousRows.build(parts.continuous, grid, n_disc)
            info[n_disc:] = parts.continuous.information(grid).T
        # A zero row after each table: what an unanswered column adds.
        flat = np.vstack([log_p.reshape(-1, grid.size), np.zeros((1, grid.size), np.float32)])
        info = np.vstack([info, np.zeros((1, grid.size), np.float32)])
        return cls(params, grid, flat, info, width, rows)

    @property
    def n_items(self) -> int:
        return self.params.n_items

    @property
    def n_discrete(self) -> int:
        """The discrete items, positions 0..n_discrete − 1; continuous ones follow."""
        return self.n_items if self.continuous is None else self.continuous.offset

    @property
    def max_scores(self) -> FloatArray:
        """Each item's top score (1 for a continuous item), (J,)."""
        return np.asarray(self.params.max_scores, dtype=np.float64)

    @cached_property
    def locations(self) -> FloatArray:
        """Where each item's expected score first reaches half its maximum (for a binary
        2PL item its b; for a graded item about the mean of its −d_k/a), (J,)."""
        n_disc = self.n_discrete
        half = self.max_scores / 2.0
        out = np.empty(self.n_items)
        scores = np.arange(self.width, dtype=np.float32)[None, :, None]
        if self.continuous is not None:
            out[n_disc:] = self.continuous.locations()
        for lo in range(0, n_disc, _BLOCK):
            hi = min(lo + _BLOCK, n_disc)
            block = self.log_p[lo * self.width : hi * self.width].reshape(hi - lo, self.width, -1)
            expected = (np.exp(block) * scores).sum(axis=1)  # (block, G)
            above = expected >= half[lo:hi, None]
            first = np.where(above.any(axis=1), above.argmax(axis=1), self.grid.size - 1)
            out[lo:hi] = self.grid[first]
        return out

    @property
    def step(self) -> float:
        return float(self.grid[1] - self.grid[0])

    def log_likelihood(self, items: IntArray, scores: FloatArray, given: BoolArray) -> FloatArray:
        """Σ over each examinee's answers of log P(X = score | grid) (log density for a
        continuous item), (E, G) float64, from item positions and scores (E, L);
        ``given`` marks the answered columns."""
        discrete = given & (items < self.n_discrete)
        # Unanswered and continuous columns point at the zero row past the table's end.
        keys = np.where(
            discrete,
            items * self.width + np.where(discrete, scores, 0).astype(np.int_),
            self._zero_row,
        )
        out = np.zeros((items.shape[0], self.grid.size))
        for column in keys.T:  # one (E, G) gather per column: no (E, L, G) temporary
            out += self.log_p[column]
        if self.continuous is not None:
            answered = given & ~discrete
            for c in np.flatnonzero(answered.any(axis=0)):
                rows = answered[:, c]
                out[rows] += self.continuous.log_density_rows(items[rows, c], scores[rows, c])
        return out

    def information_at(self, items: IntArray, given: BoolArray, theta: FloatArray) -> FloatArray:
        """Test information of each examinee's answered items at its θ, (E,), linearly
        interpolated between grid points."""
        pos = np.clip((theta - self.grid[0]) / self.step, 0.0, self.grid.size - 1.0)
        lo = np.minimum(np.floor(pos).astype(np.int_), self.grid.size - 2)
        frac = (pos - lo)[:, None]
        j = np.where(given, items, self.n_items)  # the zero row when not answered
        near = self.info[j, lo[:, None]].astype(np.float64)
        far = self.info[j, lo[:, None] + 1].astype(np.float64)
        return np.asarray(((1 - frac) * near + frac * far).sum(axis=1))

    @property
    def _zero_row(self) -> int:
        return self.n_discrete * self.width
