"""The conformal half-width of the references' cross-fitted errors stored in a pool."""

from __future__ import annotations

import pytest

from cat.prediction.conformal import describe_widening, half_width
from itempool.prediction_errors import PredictionErrors


def _errors(**errors: list[float]) -> PredictionErrors:
    return PredictionErrors(
        folds=5, seed=0, policy="mfi", errors={k.lstrip("_"): v for k, v in errors.items()}
    )


def test_half_width_is_the_conformal_rank_at_the_nearest_length() -> None:
    ten = [0.01 * k * (-1) ** k for k in range(1, 11)]  # |e| = 0.01 … 0.10
    twenty = [0.001 * k for k in range(1, 21)]
    stored = _errors(_100=ten, _250=twenty)
    # n = 10: ⌈11 · 0.9⌉ = 10th smallest |e|; n = 20: ⌈21 · 0.9⌉ = 19th
    assert half_width(stored, 90) == (100, pytest.approx(0.10))
    assert half_width(stored, 250) == (250, pytest.approx(0.019))
    assert half_width(stored, 175) == (250, pytest.approx(0.019))  # a tie goes to the longer
    assert half_width(stored, 1000)[0] == 250
    info = describe_widening(stored, 240)
    assert info["references"] == 20 and info["length"] == 250 and info["level"] == 0.9
