"""More selection policies: Kullback–Leibler information and a-stratification."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.errors import CatError
from cat.selection import IntArray, PoolInfo, SelectionState
from irt.models import probability
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
        params = pool.params
        theta = state.theta
        half = self.z / np.sqrt(np.maximum(state.n_given, 1))
        p0 = np.clip(probability(theta, params), _EPS, 1 - _EPS)  # (E, J)
        score = np.zeros_like(p0)
        for t in np.linspace(-1.0, 1.0, self.n_nodes):
            p = np.clip(probability(theta + t * half, params), _EPS, 1 - _EPS)
            score += p0 * np.log(p0 / p) + (1 - p0) * np.log((1 - p0) / (1 - p))
        score[~state.available] = -np.inf
        return np.asarray(score.argmax(axis=1), dtype=np.int_)


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
        params = pool.params
        strata = stratify(params.a, params.b, self.n_strata)
        stage = np.minimum(state.n_given * self.n_strata // self.test_length, self.n_strata - 1)
        closeness = -np.abs(params.b[None, :] - state.theta[:, None])
        in_stage = strata[None, :] == stage[:, None]
        preferred = state.available & in_stage
        # An exhausted stratum falls back to any available item.
        use = np.where(preferred.any(axis=1, keepdims=True), preferred, state.available)
        closeness[~use] = -np.inf
        return np.asarray(closeness.argmax(axis=1), dtype=np.int_)
