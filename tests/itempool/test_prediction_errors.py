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
