"""Selection policies: invariants that hold for any pool and any state."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.selection import MaxInfo, PoolInfo, Randomesque, RandomItem, SelectionState
from cat.errors import CatError
from irt.models import information
from irt.simulate import random_params

POLICIES = [MaxInfo(), RandomItem(), Randomesque(5)]


@pytest.fixture(scope="module")
def pool() -> PoolInfo:
    return PoolInfo.build(random_params(300, np.random.default_rng(0), "3pl"))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: type(p).__name__)
def test_only_available_items_are_chosen(policy: object, pool: PoolInfo) -> None:
    rng = np.random.default_rng(1)
    available = rng.random((50, 300)) < 0.1
    available[:, 7] = True  # at least one left for everybody
    state = SelectionState.fresh(rng.normal(size=50), available)
    chosen = policy.select(pool, state, rng)  # type: ignore[attr-defined]
    assert chosen.shape == (50,)
    assert available[np.arange(50), chosen].all()


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: type(p).__name__)
def test_a_whole_pool_is_given_without_repeats(policy: object) -> None:
    small = PoolInfo.build(random_params(25, np.random.default_rng(2), "2pl"))
    rng = np.random.default_rng(3)
    available = np.ones((4, 25), dtype=bool)
    seen: list[np.ndarray] = []
    for _ in range(25):
        state = SelectionState(np.zeros(4), available.copy(), ~available)
        chosen = policy.select(small, state, rng)  # type: ignore[attr-defined]
        assert available[np.arange(4), chosen].all()
        available[np.arange(4), chosen] = False
        seen.append(chosen)
    assert not available.any()
    assert all(len(set(col)) == 25 for col in np.array(seen).T)


def test_max_info_takes_the_most_informative_item(pool: PoolInfo) -> None:
    theta = np.array([-2.0, 0.0, 1.5])
    available = np.ones((3, 300), dtype=bool)
    chosen = MaxInfo().select(
        pool, SelectionState.fresh(theta, available), np.random.default_rng(0)
    )
    exact = information(theta, pool.params)
    best = exact.max(axis=1)
    # The table's grid step (0.01) may swap near-ties only.
    np.testing.assert_allclose(exact[np.arange(3), chosen], best, rtol=1e-3)


def test_randomesque_stays_within_the_top_k(pool: PoolInfo) -> None:
    theta = np.zeros(200)
    available = np.ones((200, 300), dtype=bool)
    state = SelectionState.fresh(theta, available)
    chosen = Randomesque(4).select(pool, state, np.random.default_rng(5))
    top = set(np.argsort(-pool.at(np.zeros(1))[0])[:4].tolist())
    assert set(chosen.tolist()) <= top
    assert len(set(chosen.tolist())) > 1  # it does randomise
    with pytest.raises(CatError):
        Randomesque(0)


def test_random_policy_is_reproducible(pool: PoolInfo) -> None:
    available = np.ones((10, 300), dtype=bool)
    state = SelectionState.fresh(np.zeros(10), available)
    one = RandomItem().select(pool, state, np.random.default_rng(9))
    two = RandomItem().select(pool, state, np.random.default_rng(9))
    assert (one == two).all()
