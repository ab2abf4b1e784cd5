"""``pool.json``'s ``prediction_errors``: how far the references' predicted accuracy
landed from their real accuracy when they were left out of the calibration
(``cat.cross_fit`` computes them; ``cat assess`` widens its interval with them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from irt.types import FloatArray

#: The interval's coverage, as in ``cat validate``.
LEVEL = 0.90


def conformal_quantile(abs_errors: FloatArray) -> float:
    """The split-conformal 90% half-width from n absolute errors: the ⌈(n + 1)·0.9⌉-th
    smallest (the largest when that rank exceeds n)."""
    ranked = np.sort(np.asarray(abs_errors, dtype=np.float64))
    rank = math.ceil((len(ranked) + 1) * LEVEL)
    return float(ranked[min(rank, len(ranked)) - 1])


class PredictionErrors(BaseModel):
    """``pool.json``'s ``prediction_errors``: signed errors (predicted − real accuracy)
    of the references, per test length, from a K-fold replay."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = "k-fold replay"
    folds: int = Field(ge=2)
    seed: int
    policy: str
    predictor: str = "plug-in"
    errors: dict[str, list[float]]

    @field_validator("errors")
    @classmethod
    def _lengths_and_values(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        if not value:
            raise ValueError("no test length")
        for length, errors in value.items():
            if not length.isdigit() or int(length) < 1:
                raise ValueError(f"test length {length!r} is not a positive whole number")
            if len(errors) < 2 or not all(math.isfinite(e) and abs(e) <= 1 for e in errors):
                raise ValueError(f"length {length}: need at least 2 errors in [-1, 1]")
        return value

    def half_width(self, length: int) -> tuple[int, float]:
        """(the stored length nearest to ``length``, the 90% conformal half-width there)."""
        stored = min((int(k) for k in self.errors), key=lambda k: (abs(k - length), -k))
        return stored, conformal_quantile(np.abs(np.asarray(self.errors[str(stored)], float)))

    def describe(self, length: int) -> dict[str, Any]:
        """What ``cat assess`` records about the widening it applies at ``length``."""
        stored, half = self.half_width(length)
        return {
            "method": f"widened to the references' cross-fitted errors ({self.method})",
            "folds": self.folds,
            "references": len(self.errors[str(stored)]),
            "length": stored,
            "half_width": half,
            "level": LEVEL,
        }
