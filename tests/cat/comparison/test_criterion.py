"""``cat.comparison.criterion``: the item that most narrows Var(Δ̂)."""

from __future__ import annotations

import numpy as np
import pytest

from cat.comparison.criterion import DifferencePolicy, variance_drop
from cat.engine.selection import PoolInfo, SelectionState
from cat.errors import CatError
from irt.models import ItemParams, ModelKind, information

#: Item 0 sits between the two θs (informative at both), items 1 and 2 far off (at
#: neither), item 3 at θ_A only, item 4 at θ_B only.
B = np.array([0.0, 5.0, -5.0, -1.0, 1.0])
PARAMS = ItemParams(
    item_ids=tuple(f"q{k}" for k in range(5)),
    a=np.full(5, 2.0),
    b=B,
    c=np.zeros(5),
    d=np.ones(5),
    model=ModelKind.TWO_PL,
)
POOL = PoolInfo.build(PARAMS)


def _pick(policy: DifferencePolicy, available: np.ndarray | None = None) -> int:
    mask = np.ones(5, dtype=bool) if available is None else available
    state = SelectionState.fresh(np.zeros(1), mask[None, :])
    return int(policy.select(POOL, state, np.random.default_rng(0))[0])


def test_the_drop_is_the_fall_in_the_delta_method_variance() -> None:
    slopes, totals = (0.2, 0.3), (4.0, 9.0)
    info_a, info_b = information([-0.5], PARAMS)[0], information([0.5], PARAMS)[0]
    before = slopes[0] ** 2 / totals[0] + slopes[1] ** 2 / totals[1]
    after = slopes[0] ** 2 / (totals[0] + info_a) + slopes[1] ** 2 / (totals[1] + info_b)
    assert np.allclose(variance_drop(info_a, info_b, slopes, totals), before - after)


def test_an_item_informative_at_both_thetas_beats_one_informative_at_neither() -> None:
    policy = DifferencePolicy(-0.5, 0.5, 0.2, 0.2, 5.0, 5.0)
    assert _pick(policy) == 0
    # Without it, one informative at one of them still beats the far ones.
    assert _pick(policy, np.array([False, True, True, True, True])) in (3, 4)


def test_the_less_known_model_gets_its_items() -> None:
    """With A's θ known far better than B's, an item at θ_B narrows Δ most."""
    b_less_known = DifferencePolicy(-1.0, 1.0, 0.2, 0.2, 100.0, 2.0)
    a_less_known = DifferencePolicy(-1.0, 1.0, 0.2, 0.2, 2.0, 100.0)
    assert _pick(b_less_known) == 4
    assert _pick(a_less_known) == 3


def test_the_information_so_far_must_be_positive() -> None:
    with pytest.raises(CatError, match="positive"):
        DifferencePolicy(0.0, 0.0, 0.2, 0.2, 0.0, 1.0)
