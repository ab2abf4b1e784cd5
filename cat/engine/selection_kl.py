"""Kullback–Leibler information selection (Chang & Ying 1996)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.engine.score_table import ScoreTable
from cat.engine.selection import IntArray, PoolInfo, SelectionState
from cat.errors import CatError
from irt.types import FloatArray

_EPS = 1e-10


@dataclass(frozen=True)
class KLInfo:
    """Kullback–Leibler information (Chang & Ying 1996): the item's KL divergence
    between θ̂ and θ, integrated over θ̂ ± z/√n. Early in a test, when θ̂ is poor, it
    looks at a neighbourhood rather than one point; it tends to MFI as n grows."""

    z: float = 3.0
    n_nodes: int = 5

    def __post_init__(self) -> None:
        if not self.z > 0:
            raise CatError(f"KL half-width z must be positive, got {self.z}")
        if self.n_nodes < 2:
            raise CatError(f"KL needs at least 2 nodes, got {self.n_nodes}")

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        theta = state.theta
        half = self.z / np.sqrt(np.maximum(state.n_given, 1))
        nodes = [theta + t * half for t in np.linspace(-1.0, 1.0, self.n_nodes)]
        if pool.scores is not None:
            score = _scored_kl(pool.scores, theta, nodes)
        else:
            params = pool.params  # 0/1 items: the expected score is P(right)
            p0 = np.clip(params.expected_score(theta), _EPS, 1 - _EPS)  # (E, J)
            score = np.zeros_like(p0)
            for node in nodes:
                p = np.clip(params.expected_score(node), _EPS, 1 - _EPS)
                score += p0 * np.log(p0 / p) + (1 - p0) * np.log((1 - p0) / (1 - p))
        score[~state.available] = -np.inf
        return np.asarray(score.argmax(axis=1), dtype=np.int_)


def _scored_kl(table: ScoreTable, theta: FloatArray, nodes: list[FloatArray]) -> FloatArray:
    """Σ over ``nodes`` of KL(P(· | θ̂) ‖ P(· | node)) of every item of a scored pool,
    (E, J): for a discrete item each distribution read at the score table's nearest
    grid point, for a continuous one in closed form."""
    n_items = table.n_discrete

    def log_p(at: FloatArray) -> FloatArray:
        g = np.clip(np.rint((at - table.grid[0]) / table.step).astype(np.int_), 0, None)
        g = np.minimum(g, table.grid.size - 1)
        rows = table.log_p[: n_items * table.width, g].T  # (E, J * width)
        return np.asarray(rows.reshape(len(at), n_items, table.width), dtype=np.float64)

    own = log_p(theta)
    p0 = np.exp(own)
    score = np.zeros((len(theta), n_items))
    for node in nodes:
        # 0·log 0 = 0 beyond an item's categories (both log-probabilities are −inf there).
        gap = np.where(p0 > 0, own - np.maximum(log_p(node), np.log(_EPS)), 0.0)
        score += (p0 * gap).sum(axis=2)
    if table.continuous is None:
        return score
    continuous = sum(table.continuous.kl(theta, node) for node in nodes)
    return np.hstack([score, np.asarray(continuous)])
