"""KL, a-stratified, content balancing and exposure control."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.constraints import ContentBalanced, MaxExposure
from cat.engine.estimators import MLEstimator
from cat.engine.selection import MaxInfo, PoolInfo, RandomItem, SelectionState
from cat.engine.selection_kl import KLInfo
from cat.engine.selection_strata import AStratified, stratify
from cat.engine.simulation import CATDesign, simulate_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from irt.simulate import random_params

PARAMS = random_params(600, np.random.default_rng(0), "3pl")
POOL = PoolInfo.build(PARAMS)
SCENARIO = tuple(int(x) for x in np.random.default_rng(1).integers(0, 4, 600))


def _run(policy, n=40, length=40, seed=2):  # type: ignore[no-untyped-def]
    theta = np.random.default_rng(seed).normal(size=n)
    res = simulate_cat(
        PARAMS,
        theta,
        CATDesign(policy, MLEstimator(), StoppingRule(length)),
        np.random.default_rng(seed + 1),
        POOL,
    )
    return theta, res


@pytest.mark.parametrize(
    "policy",
    [
        KLInfo(),
        AStratified(4, 40),
        ContentBalanced(MaxInfo(), SCENARIO),
        MaxExposure(MaxInfo(), 0.3),
    ],
    ids=["kl", "astrat", "content", "exposure"],
)
def test_never_repeats_and_only_available(policy) -> None:  # type: ignore[no-untyped-def]
    _, res = _run(policy)
    assert (res.n_items == 40).all()
    for row in res.items:
        assert len(set(row.tolist())) == 40
    rng = np.random.default_rng(4)
    available = rng.random((30, 600)) < 0.2
    available[:, 3] = True
    chosen = policy.select(POOL, SelectionState.fresh(rng.normal(size=30), available), rng)
    assert available[np.arange(30), chosen].all()


def test_kl_is_about_as_precise_as_mfi() -> None:
    theta, kl = _run(KLInfo(), n=100)
    _, mfi = _run(MaxInfo(), n=100)
    _, rnd = _run(RandomItem(), n=100)

    def rmse(r):  # type: ignore[no-untyped-def]
        return float(np.sqrt(np.mean((r.theta_hat - theta) ** 2)))

    assert rmse(kl) < 1.15 * rmse(mfi)
    assert rmse(kl) < rmse(rnd)


def test_strata_span_b_and_order_a() -> None:
    strata = stratify(PARAMS.a, PARAMS.b, 4)
    assert set(strata.tolist()) == {0, 1, 2, 3}
    mean_a = [PARAMS.a[strata == k].mean() for k in range(4)]
    assert mean_a == sorted(mean_a)
    for k in range(4):  # b-blocking: each stratum covers the range of b
        b = PARAMS.b[strata == k]
        assert b.min() < -1.5 and b.max() > 1.5


def test_a_stratified_moves_up_the_strata() -> None:
    _, res = _run(AStratified(4, 40))
    strata = stratify(PARAMS.a, PARAMS.b, 4)
    given = strata[res.items]
    assert (given[:, :10] == 0).all() and (given[:, 30:] == 3).all()


def test_content_balancing_meets_target_shares() -> None:
    targets = (0.4, 0.3, 0.2, 0.1)
    _, res = _run(ContentBalanced(MaxInfo(), SCENARIO, targets))
    codes = np.asarray(SCENARIO)[res.items]
    for area, share in enumerate(targets):
        counts = (codes == area).sum(axis=1)
        assert np.all(np.abs(counts - share * 40) <= 1)


def test_exposure_rate_is_capped() -> None:
    _, free = _run(MaxInfo(), n=100)
    _, capped = _run(MaxExposure(MaxInfo(), 0.2), n=100)
    assert free.exposure(600).max() > 0.5  # MFI alone reuses its favourites
    assert capped.exposure(600).max() <= 0.2 + 1e-9


def test_exposure_history_counts() -> None:
    history = tuple([1000] + [0] * 599)
    policy = MaxExposure(MaxInfo(), 0.1, history=history, n_history=1000)
    available = np.ones((5, 600), dtype=bool)
    state = SelectionState.fresh(np.full(5, PARAMS.b[0]), available)
    assert 0 not in policy.select(POOL, state, np.random.default_rng(0)).tolist()


def test_bad_settings_are_refused() -> None:
    for make in (
        lambda: KLInfo(z=0),
        lambda: AStratified(0),
        lambda: MaxExposure(MaxInfo(), 0),
        lambda: ContentBalanced(MaxInfo(), ()),
        lambda: ContentBalanced(MaxInfo(), (0, 1), (1.0,)),
    ):
        with pytest.raises(CatError):
            make()


def test_exposure_cap_holds_when_examinees_stop_at_different_times() -> None:
    theta = np.random.default_rng(20).normal(size=150)
    design = CATDesign(
        MaxExposure(MaxInfo(), 0.25), MLEstimator(), StoppingRule(120, se_target=0.25), 5
    )
    res = simulate_cat(PARAMS, theta, design, np.random.default_rng(21), POOL)
    assert len(set(res.n_items.tolist())) > 1  # they did stop at different lengths
    assert res.exposure(600).max() <= 0.25 + 1e-9
