"""Selection policies: invariants that hold for any pool and any state."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.selection import (
    MaxInfo,
    PoolInfo,
    Proportional,
    Randomesque,
    RandomItem,
    SelectionState,
)
from cat.errors import CatError
from irt.models import information
from irt.simulate import random_params

POLICIES = [MaxInfo(), RandomItem(), Randomesque(5), Proportional(), Proportional(0.0)]


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


def test_proportional_draws_in_proportion_to_information_to_the_power() -> None:
    small = PoolInfo.build(random_params(6, np.random.default_rng(4), "3pl"))
    theta = np.full(40_000, 0.3)
    available = np.ones((theta.size, 6), dtype=bool)
    available[:, 5] = False
    info = small.at(theta[:1])[0, :5].astype(np.float64)
    for power in (0.0, 1.0, 2.0):
        chosen = Proportional(power).select(
            small, SelectionState.fresh(theta, available), np.random.default_rng(5)
        )
        share = np.bincount(chosen, minlength=6) / theta.size
        assert share[5] == 0.0
        expected = info**power / np.sum(info**power)
        # 40,000 draws: a share's sd is at most 0.0025.
        np.testing.assert_allclose(share[:5], expected, atol=0.012)


def test_proportional_nears_mfi_as_the_power_grows(pool: PoolInfo) -> None:
    rng = np.random.default_rng(6)
    theta, available = rng.normal(size=200), rng.random((200, 300)) < 0.5
    info = np.where(available, pool.at(theta), 0.0)
    best = info.max(axis=1)
    state = SelectionState.fresh(theta, available)
    ratio = [
        float(np.mean(info[np.arange(200), Proportional(p).select(pool, state, rng)] / best))
        for p in (0.0, 1.0, 10.0, 50.0)
    ]
    assert ratio == sorted(ratio) and ratio[0] < 0.4 and ratio[-1] > 0.99


@pytest.mark.parametrize("power", [-1.0, 51.0, float("nan"), float("inf")])
def test_proportional_refuses_a_bad_power(power: float) -> None:
    with pytest.raises(CatError, match="power"):
        Proportional(power)
