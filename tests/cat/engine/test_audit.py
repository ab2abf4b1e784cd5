"""Audit items: when they come, which item each is, and that they leave the rest alone."""

from __future__ import annotations

import numpy as np

from cat.engine.audit import EASY, HARD, Audited, audit_number, audit_targets, pick_audits
from cat.engine.selection import MaxInfo, PoolInfo, SelectionState
from irt.models import ItemParams, probability


def test_none_in_the_first_thirty_then_one_in_five_then_one_in_ten() -> None:
    steps = np.arange(1, 121)
    numbers = audit_number(steps, 10)
    audited = steps[numbers > 0]
    assert audited.tolist() == [35, 40, 45, 50, 55, 60, 70, 80, 90, 100, 110, 120]
    assert numbers[numbers > 0].tolist() == list(range(1, 13))
    # Easy and hard in turn, the first easy; the targets are for the *next* item.
    targets = audit_targets(steps - 1, 10)
    assert targets[34] == EASY and targets[39] == HARD and targets[59] == HARD
    assert np.isnan(targets[:34]).all() and np.isnan(targets[60:69]).all()
    assert not audit_number(steps, None).any() and not audit_number(steps, 0).any()


def test_an_audit_is_the_best_liked_item_beyond_its_chance_else_the_nearest() -> None:
    chances = np.array([[0.5, 0.92, 0.95, 0.1, 0.3], [0.5, 0.6, 0.7, 0.8, 0.2]])
    available = np.ones_like(chances, dtype=bool)
    liking = np.array([[5.0, 1.0, 2.0, 9.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    easy = np.array([EASY, EASY])
    # Row 0: items 1 and 2 are easy enough, 2 is liked better; row 1: none is, 3 nearest.
    assert pick_audits(chances, available, easy, liking).tolist() == [2, 3]
    hard = np.array([HARD, HARD])
    # Row 0: item 3 (chance .1) is the only one hard enough; row 1: item 4 is nearest.
    assert pick_audits(chances, available, hard, liking).tolist() == [3, 4]
    available[0, 2] = False  # an item given already is never picked again
    assert pick_audits(chances, available, easy, liking).tolist() == [1, 3]


def test_the_audited_policy_changes_only_the_audit_steps() -> None:
    rng = np.random.default_rng(0)
    n = 400
    params = ItemParams.create(a=rng.uniform(0.8, 2.0, n), b=rng.normal(0, 1.5, n), model="2pl")
    pool = PoolInfo.build(params)
    theta = np.array([0.0, 1.0, -1.0])
    available = np.ones((3, n), dtype=bool)
    given = np.zeros((3, n), dtype=bool)
    given[:, :34] = True  # 34 given: the next is the 35th, an easy audit
    given[1, 34] = True  # the second examinee's next is the 36th: not an audit
    available &= ~given
    state = SelectionState(theta=theta, available=available, given=given)
    plain = MaxInfo().select(pool, state, rng)
    audited = Audited(MaxInfo()).select(pool, state, rng)
    assert audited[1] == plain[1]
    for row in (0, 2):
        chance = probability(theta[row : row + 1], params)[0]
        assert chance[audited[row]] >= EASY
        # The most informative of the items that easy: the one just past the target.
        easy_enough = np.flatnonzero((chance >= EASY) & available[row])
        info = pool.at(theta[row : row + 1])[0]
        assert audited[row] == easy_enough[np.argmax(info[easy_enough])]
