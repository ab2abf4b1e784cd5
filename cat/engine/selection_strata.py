"""a-stratified selection with b-blocking (Chang, Qian & Ying 2001)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.engine.selection import IntArray, PoolInfo, SelectionState
from cat.errors import CatError
from irt.types import FloatArray


def stratify(a: FloatArray, b: FloatArray, n_strata: int) -> IntArray:
    """Stratum of each item, 0 (lowest a) to n_strata − 1, with b-blocking (Chang, Qian &
    Ying 2001): items sorted by b form blocks of ``n_strata``; within a block the k-th
    smallest a goes to stratum k, so every stratum spans the whole range of b."""
    order = np.argsort(b, kind="stable")
    strata = np.empty(len(a), dtype=np.int_)
    for lo in range(0, len(order), n_strata):
        block = order[lo : lo + n_strata]
        ranks = np.argsort(np.argsort(a[block], kind="stable"), kind="stable")
        # A short last block spreads over the strata in proportion.
        strata[block] = ranks * n_strata // len(block)
    return strata


@dataclass(frozen=True)
class AStratified:
    """a-stratified selection with b-blocking: the test moves from the low-a stratum to
    the high-a one in equal parts of ``test_length``; within a stratum, the item whose b
    is closest to θ̂. Saves the most discriminating items for when θ̂ is good, which
    evens out item exposure."""

    n_strata: int = 4
    test_length: int = 250

    def __post_init__(self) -> None:
        if self.n_strata < 1:
            raise CatError(f"n_strata must be at least 1, got {self.n_strata}")
        if self.test_length < 1:
            raise CatError(f"test_length must be at least 1, got {self.test_length}")

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        a, b = _slopes_and_locations(pool)
        strata = stratify(a, b, self.n_strata)
        stage = np.minimum(state.n_given * self.n_strata // self.test_length, self.n_strata - 1)
        closeness = -np.abs(b[None, :] - state.theta[:, None])
        in_stage = strata[None, :] == stage[:, None]
        preferred = state.available & in_stage
        # An exhausted stratum falls back to any available item.
        use = np.where(preferred.any(axis=1, keepdims=True), preferred, state.available)
        closeness[~use] = -np.inf
        return np.asarray(closeness.argmax(axis=1), dtype=np.int_)


def _slopes_and_locations(pool: PoolInfo) -> tuple[FloatArray, FloatArray]:
    """Each item's a and b (for a scored item, its ``ScoreTable.locations``)."""
    if pool.scores is not None:
        return np.asarray(pool.scores.params.a), pool.scores.locations
    params = pool.params
    if params.scored:
        raise CatError("a pool of scored items needs its score table (PoolInfo.build)")
    return params.a, params.b
