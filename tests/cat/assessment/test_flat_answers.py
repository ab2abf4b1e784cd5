"""A model whose answers ignore difficulty: caught by the slope check on the audit items,
and predicted from its own answers instead of the design's extrapolation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

import cat
from cat.assessment.examinees import _OfflineExaminee
from itempool import LoadedPool

DEMO_EN = Path(__file__).resolve().parents[3] / "item_pools" / "demo-en"


class FlatExaminee(_OfflineExaminee):
    """Right with probability ``rate`` on every item, its answers drawn once."""

    def __init__(self, rate: float, seed: int) -> None:
        self.rate, self.seed = rate, seed
        self.answers: dict[str, int] = {}

    @property
    def label(self) -> str:
        return f"flat:{self.rate}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        drawn = np.random.default_rng(self.seed).random(len(pool.items)) < self.rate
        self.answers = {item.id: int(r) for item, r in zip(pool.items, drawn, strict=True)}

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        return [self.answers[i] for i in item_ids]

    def truth(self) -> float:
        return float(np.mean(list(self.answers.values())))


def test_a_flat_model_is_flagged_and_predicted_from_its_own_answers() -> None:
    pool = cat.load_pool(DEMO_EN)
    for rate, seed in ((0.4, 1), (0.7, 2)):
        examinee = FlatExaminee(rate, seed)
        result = cat.assess(pool, examinee, length=150, seed=seed)
        slope, fallback = result.slope_check, result.fallback
        assert slope is not None and slope.flagged and slope.z < slope.threshold
        assert slope.references is None and slope.audit_every == 10  # no cross-fit stored
        assert fallback is not None and fallback.reason == slope.reason
        assert abs(fallback.slope) < 0.6  # the answers hardly follow difficulty
        acc = result.predicted_accuracy
        assert acc.low <= examinee.truth() <= acc.high
        assert "answers' own accuracy" in result.accuracy_interval.method
        # The design's own prediction, kept beside it, was far off.
        assert abs(fallback.replaced.value - examinee.truth()) > abs(acc.value - examinee.truth())


def test_a_model_that_follows_difficulty_keeps_the_designs_prediction() -> None:
    result = cat.assess(DEMO_EN, cat.SimulatedExaminee(theta=0.4, seed=3), length=150, seed=3)
    assert result.slope_check is not None and not result.slope_check.flagged
    assert result.fallback is None
    without = cat.assess(
        DEMO_EN, cat.SimulatedExaminee(theta=0.4, seed=3), length=150, seed=3, audit_every=0
    )
    assert without.slope_check is not None and without.slope_check.audit_every is None
    assert without.settings.audit_every is None and result.settings.audit_every == 10
