"""The interval scaled by a model's disagreement (cat.prediction.disagreement)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cat.prediction.conformal import conformal_quantile
from cat.prediction.disagreement import MIN_OFFSET, ScaledWidth, scaled_width
from itempool.prediction_errors import PredictionErrors


def test_the_fit_by_hand() -> None:
    errors = np.array([0.01, 0.02, 0.03, 0.04, 0.10, 0.02])
    spread = np.array([0.00, 0.01, 0.02, 0.02, 0.08, 0.01])
    fit = ScaledWidth.fit(errors, spread)
    assert fit is not None
    offset = 0.015  # the median disagreement
    ratios = np.sort(errors / (spread + offset))
    # ⌈(6 + 1)·0.9⌉ = 7 > 6: the largest ratio.
    assert fit.offset == pytest.approx(offset)
    assert fit.quantile == pytest.approx(ratios[-1])
    assert fit.threshold == pytest.approx(0.08) and fit.references == 6
    assert fit.half_width(0.05) == pytest.approx(ratios[-1] * 0.065)
    assert fit.unlike(0.081) and not fit.unlike(0.08)


def test_signs_missing_values_and_too_few_references() -> None:
    fit = ScaledWidth.fit(np.array([-0.02, 0.02, np.nan, 0.01, -0.03, 0.02]), np.zeros(6))
    assert fit is not None and fit.references == 5
    # Every disagreement zero: the least offset, and the width of the plain quantile.
    assert fit.offset == MIN_OFFSET
    assert fit.half_width(0.0) == pytest.approx(0.03)
    assert ScaledWidth.fit(np.ones(4) * 0.01, np.ones(4) * 0.01) is None
    with pytest.raises(ValueError, match="one error and one disagreement"):
        ScaledWidth.fit(np.ones(5), np.ones(4))


def test_coverage_follows_the_disagreement_where_one_width_does_not() -> None:
    """Errors whose spread grows with the disagreement plus a typical one (as the method
    assumes): one width for all covers the calm models too often and the far ones too
    rarely; the scaled width covers about 90% of both."""
    rng = np.random.default_rng(0)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        spread = rng.exponential(0.02, n)
        return np.abs(rng.normal(0, 0.5 * (np.log(2) * 0.02 + spread))), spread

    references, spread = draw(1000)
    fit = ScaledWidth.fit(references, spread)
    assert fit is not None
    new, new_spread = draw(20_000)
    far = new_spread > np.quantile(new_spread, 0.8)
    scaled = new <= fit.half_width(new_spread)
    constant = new <= conformal_quantile(references)
    assert 0.85 <= scaled[far].mean() <= 0.95 and 0.85 <= scaled[~far].mean() <= 0.95
    assert constant[far].mean() < 0.75 and constant[~far].mean() > 0.94
    assert 0.86 <= scaled.mean() <= 0.94


def _errors(disagreement: dict[str, list[float]] | None) -> PredictionErrors:
    return PredictionErrors(
        folds=5,
        seed=0,
        policy="mixture",
        predictor="mixture",
        errors={"50": [0.01, -0.02, 0.03, -0.01, 0.02], "100": [0.01, -0.01, 0.02, 0.0, 0.01]},
        disagreement=disagreement,
    )


def test_a_pool_without_disagreements_keeps_one_width() -> None:
    assert scaled_width(_errors(None), 60) == (50, None)
    stored, fit = scaled_width(_errors({"100": [0.0, 0.01, 0.02, 0.01, 0.0]}), 90)
    assert stored == 100 and fit is not None and math.isclose(fit.offset, 0.01)
    assert scaled_width(_errors({"100": [0.0, 0.01, 0.02, 0.01, 0.0]}), 60) == (50, None)


def test_stored_disagreements_line_up_with_the_errors() -> None:
    with pytest.raises(ValueError, match="one value per error"):
        _errors({"100": [0.0, 0.01]})
    with pytest.raises(ValueError, match="one value per error"):
        _errors({"70": [0.0] * 5})
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        _errors({"100": [0.0, 0.01, -0.02, 0.01, 0.0]})
