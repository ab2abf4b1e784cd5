"""Stopping rules: when an examinee's test ends, and why."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cat.errors import CatError
from irt.types import FloatArray

#: The reasons a test ends, as recorded in results.
MAX_LENGTH = "max_length"
SE_TARGET = "se_target"
POOL_EXHAUSTED = "pool_exhausted"


@dataclass(frozen=True)
class StoppingRule:
    """Stop at ``max_items``, or once SE ≤ ``se_target`` (if set), but never before
    ``min_items``; a pool with nothing left to give always stops.

    ``StoppingRule(max_items=250, se_target=0.2, min_items=30)`` reads "SE ≤ 0.2 or 250
    items, but at least 30".
    """

    max_items: int = 250
    se_target: float | None = None
    min_items: int = 0

    def __post_init__(self) -> None:
        if self.max_items < 1:
            raise CatError(f"max_items must be at least 1, got {self.max_items}")
        if not 0 <= self.min_items <= self.max_items:
            raise CatError(
                f"min_items must be between 0 and max_items ({self.max_items}), "
                f"got {self.min_items}"
            )
        if self.se_target is not None and not self.se_target > 0:
            raise CatError(f"se_target must be positive, got {self.se_target}")

    def reasons(
        self, n_given: FloatArray, se: FloatArray, n_left: FloatArray
    ) -> npt.NDArray[np.object_]:
        """Per examinee: why the test stops now, or None to go on."""
        out = np.full(len(n_given), None, dtype=object)
        out[n_given >= self.max_items] = MAX_LENGTH
        if self.se_target is not None:
            hit = (se <= self.se_target) & (n_given >= self.min_items) & (out == None)  # noqa: E711
            out[hit] = SE_TARGET
        out[(n_left <= 0) & (out == None)] = POOL_EXHAUSTED  # noqa: E711
        return out
