"""``pool.json``'s stored prediction errors: what the format accepts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from itempool.prediction_errors import PredictionErrors


@pytest.mark.parametrize(
    ("errors", "words"),
    [
        ({}, "no test length"),
        ({"abc": [0.1, 0.2]}, "not a positive whole number"),
        ({"100": [0.1]}, "at least 2 errors"),
        ({"100": [0.1, 1.5]}, "at least 2 errors in"),
    ],
)
def test_bad_errors_are_refused(errors: dict[str, list[float]], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        PredictionErrors(folds=5, seed=0, policy="mfi", errors=errors)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"fallback_errors": {"100": [0.1]}}, "fallback_errors at length 100: one value per"),
        ({"fallback_errors": {"250": [0.1, 0.2]}}, "fallback_errors at length 250: one value"),
        ({"fallback_errors": {"100": [0.1, 1.2]}}, "values must be in"),
        ({"slope_z": {"250": [0.1]}}, "slope_z at length 250"),
        ({"slope_z": {"100": [float("nan")]}}, "slope_z at length 100"),
    ],
)
def test_the_slope_checks_and_fallbacks_figures_are_checked(
    extra: dict[str, dict[str, list[float]]], words: str
) -> None:
    with pytest.raises(ValidationError, match=words):
        PredictionErrors(folds=5, seed=0, policy="mfi", errors={"100": [0.1, -0.1]}, **extra)
    good = PredictionErrors(
        folds=5,
        seed=0,
        policy="mfi",
        errors={"100": [0.1, -0.1]},
        slope_z={"100": [-2.0, 0.5, 1.0]},  # any number of references: the finite ones
        fallback_errors={"100": [0.05, -0.2]},
    )
    assert good.fallback_errors == {"100": [0.05, -0.2]}
