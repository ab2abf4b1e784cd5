"""Sympson–Hetter exposure control."""

from __future__ import annotations

import numpy as np
import pytest

from cat.engine.estimators import MLEstimator
from cat.engine.exposure import RunPopulation, SympsonHetter, sympson_hetter_parameters
from cat.engine.selection import IntArray, MaxInfo, PoolInfo
from cat.engine.simulation import CATDesign, simulate_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from irt.simulate import random_params

PARAMS = random_params(400, np.random.default_rng(0), "3pl")
POOL = PoolInfo.build(PARAMS)


def _runner(seed: int, n: int = 300, length: int = 30) -> RunPopulation:
    """New examinees from N(0, 1) at every call, as the calibration of K should see."""
    rng = np.random.default_rng(seed)

    def run(screen: SympsonHetter | None) -> IntArray:
        design = CATDesign(MaxInfo(), MLEstimator(), StoppingRule(length), exposure=screen)
        return simulate_cat(PARAMS, rng.normal(size=n), design, rng, POOL).items

    return run


def _max_rate(items: IntArray) -> float:
    return float(np.bincount(items[items >= 0], minlength=PARAMS.n_items).max() / len(items))


def test_k_of_one_keeps_the_pool_and_tests_never_repeat_items() -> None:
    available = np.ones((3, 400), dtype=bool)
    kept = SympsonHetter((1.0,) * 400).screen(available, np.random.default_rng(1), 30)
    assert kept.all()
    items = _runner(2, n=50)(SympsonHetter((0.3,) * 400))
    for row in items:
        given = row[row >= 0]
        assert len(given) == 30 and len(set(given.tolist())) == 30


def test_the_screen_passes_each_item_with_its_k() -> None:
    k = np.linspace(0.05, 1.0, 400)
    kept = SympsonHetter(tuple(k)).screen(
        np.ones((4000, 400), dtype=bool), np.random.default_rng(3), 30
    )
    np.testing.assert_allclose(kept.mean(axis=0), k, atol=0.03)


def test_an_examinee_never_runs_short_of_items() -> None:
    available = np.zeros((2, 400), dtype=bool)
    available[:, :40] = True
    kept = SympsonHetter((0.01,) * 400).screen(available, np.random.default_rng(5), 30)
    assert (kept == available).all()  # the screen would leave < 30: it is waived


def test_calibrated_k_holds_exposure_near_the_target_on_new_examinees() -> None:
    uncontrolled = _max_rate(_runner(10)(None))
    assert uncontrolled > 0.6  # MFI gives its best items to most examinees
    k, rate = sympson_hetter_parameters(400, _runner(11, n=1000), 0.2)
    # The largest of ~50 controlled items' rates among 1,000 examinees: 0.2 + ~2.3 SD.
    assert rate.max() <= 0.27
    assert (k < 1).sum() > 10 and k.min() > 0
    # Each item's rate among 5,000 new examinees (SD 0.006 at 0.2).
    fresh = _max_rate(_runner(12, n=5000)(SympsonHetter(tuple(k))))
    assert fresh <= 0.225


def test_bad_parameters_fail() -> None:
    with pytest.raises(CatError, match="positive"):
        SympsonHetter((0.0, 1.0))
    with pytest.raises(CatError, match="at most 1"):
        SympsonHetter((1.5,))
    with pytest.raises(CatError, match="pool of 400"):
        SympsonHetter((1.0,) * 3).screen(np.ones((1, 400), dtype=bool), np.random.default_rng(0), 5)
    with pytest.raises(CatError, match="maximum exposure"):
        sympson_hetter_parameters(400, _runner(1), 0.0)
