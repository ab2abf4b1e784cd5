"""Split-conformal intervals from prediction errors: the half-width that covers 90%.

``cat validate`` builds them from training subjects' cross-fitted errors; a pool's
stored ``prediction_errors`` (``itempool.PredictionErrors``) give ``cat assess`` the
same widening.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irt.types import FloatArray
from itempool.prediction_errors import PredictionErrors

#: The interval's coverage, as in ``cat validate``.
LEVEL = 0.90


def conformal_quantile(abs_errors: FloatArray) -> float:
    """The split-conformal 90% half-width from n absolute errors: the ⌈(n + 1)·0.9⌉-th
    smallest (the largest when that rank exceeds n)."""
    ranked = np.sort(np.asarray(abs_errors, dtype=np.float64))
    rank = math.ceil((len(ranked) + 1) * LEVEL)
    return float(ranked[min(rank, len(ranked)) - 1])


def half_width(errors: PredictionErrors, length: int) -> tuple[int, float]:
    """(the stored length nearest to ``length``, the 90% conformal half-width there)."""
    stored = errors.nearest_length(length)
    return stored, conformal_quantile(np.abs(np.asarray(errors.errors[str(stored)], float)))


def describe_widening(errors: PredictionErrors, length: int) -> dict[str, Any]:
    """What ``cat assess`` records about the widening it applies at ``length``."""
    stored, half = half_width(errors, length)
    return {
        "method": f"widened to the references' cross-fitted errors ({errors.method})",
        "folds": errors.folds,
        "references": len(errors.errors[str(stored)]),
        "length": stored,
        "half_width": half,
        "level": LEVEL,
    }
