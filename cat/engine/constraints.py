"""Constraints that wrap any selection policy: content balancing and exposure control."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cat.engine.selection import IntArray, PoolInfo, SelectionPolicy, SelectionState
from cat.errors import CatError


def pool_shares(scenario: tuple[int, ...]) -> tuple[float, ...]:
    """Each scenario's share of the pool's items: content-balancing targets that keep a
    test's mix of scenarios like the benchmark's own."""
    counts = np.bincount(np.asarray(scenario, dtype=np.int_))
    return tuple(float(x) for x in counts / counts.sum())


@dataclass(frozen=True)
class ContentBalanced:
    """Keep each examinee's test close to target shares of content areas (scenarios).

    Before each item the area furthest below its target share (target × (n + 1) minus
    items given in it) that still has available items is chosen, and the base policy
    picks within it. ``scenario`` gives each pool item's area (0 … S−1), ``targets``
    the S shares (normalised; equal shares if empty) — a 14-scenario benchmark is then
    not ranked on 3 scenarios.
    """

    base: SelectionPolicy
    scenario: tuple[int, ...]
    targets: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        codes = np.asarray(self.scenario)
        if codes.size == 0 or codes.min() < 0:
            raise CatError("every item needs a scenario code 0 … S−1")
        n_areas = int(codes.max()) + 1
        if self.targets:
            t = np.asarray(self.targets, dtype=float)
            if len(t) != n_areas or np.any(t < 0) or t.sum() <= 0:
                raise CatError(f"targets must be {n_areas} non-negative shares, not all zero")

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        codes = np.asarray(self.scenario)
        if len(codes) != pool.params.n_items:
            raise CatError(f"{len(codes)} scenario codes for a pool of {pool.params.n_items}")
        n_areas = int(codes.max()) + 1
        targets = np.asarray(self.targets, dtype=float) if self.targets else np.ones(n_areas)
        targets = targets / targets.sum()
        onehot = np.zeros((len(codes), n_areas))
        onehot[np.arange(len(codes)), codes] = 1.0
        counts = state.given.astype(float) @ onehot  # (E, S)
        open_areas = (state.available.astype(float) @ onehot) > 0
        deficit = targets[None, :] * (state.n_given[:, None] + 1.0) - counts
        deficit[~open_areas] = -np.inf
        area = deficit.argmax(axis=1)
        in_area = codes[None, :] == area[:, None]
        narrowed = state.available & in_area
        narrowed = np.where(narrowed.any(axis=1, keepdims=True), narrowed, state.available)
        return self.base.select(pool, replace(state, available=narrowed), rng)


@dataclass(frozen=True)
class MaxExposure:
    """Make items ineligible once their exposure rate reaches ``max_rate``.

    The rate counts the examinees tested together in this batch plus, for a pool that
    is reused, ``history`` (times each item was given before) out of ``n_history``
    earlier examinees. When every available item is over the limit, the limit is waived
    rather than stopping the test.
    """

    base: SelectionPolicy
    max_rate: float = 0.3
    history: tuple[int, ...] = ()
    n_history: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.max_rate <= 1:
            raise CatError(f"max_rate must be in (0, 1], got {self.max_rate}")
        if self.n_history < 0:
            raise CatError(f"n_history must be non-negative, got {self.n_history}")

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        n_items = pool.params.n_items
        past = np.asarray(self.history, dtype=float) if self.history else np.zeros(n_items)
        if len(past) != n_items:
            raise CatError(f"exposure history has {len(past)} items, the pool {n_items}")
        cohort = state.cohort_size if state.cohort_size is not None else len(state.theta)
        counts = state.cohort_given if state.cohort_given is not None else state.given.sum(axis=0)
        # How many more examinees each item may reach in this step.
        room = np.floor(self.max_rate * (self.n_history + cohort)) - past - counts
        eligible = state.available & (room > 0)[None, :]
        eligible = np.where(eligible.any(axis=1, keepdims=True), eligible, state.available)
        chosen = self.base.select(pool, replace(state, available=eligible), rng)
        # Examinees tested together may all want the same item in one step: keep a random
        # `room` of them on it and let the others choose again without it.
        for _ in range(20):
            over = _over_capacity(chosen, room, rng)
            if not over.any():
                break
            eligible[over, chosen[over]] = False
            retry = over & eligible.any(axis=1)
            if not retry.any():
                break
            sub = SelectionState(
                theta=state.theta[retry], available=eligible[retry], given=state.given[retry]
            )
            chosen[retry] = self.base.select(pool, sub, rng)
        return chosen


def _over_capacity(chosen: IntArray, room: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Examinees whose chosen item has more takers than room (random ones beyond it)."""
    order = rng.permutation(len(chosen))
    ranked = chosen[order]
    # Position of each taker among the takers of its item, in random order.
    sort = np.argsort(ranked, kind="stable")
    sorted_items = ranked[sort]
    starts = np.searchsorted(sorted_items, sorted_items, side="left")
    position = np.empty(len(chosen), dtype=np.int_)
    position[sort] = np.arange(len(chosen)) - starts
    over = np.zeros(len(chosen), dtype=bool)
    over[order] = position >= np.maximum(room[ranked], 1)
    return over
