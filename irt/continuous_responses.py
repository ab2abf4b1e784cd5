"""A matrix of continuous scores in [0, 1]: subjects × items, NaN where a subject did not
answer (``irt.continuous``' models)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import ResponseDataError
from irt.response_table import ResponseTable, float_table
from irt.responses import check_layout
from irt.types import BoolArray, FloatArray

__all__ = ["ContinuousResponses"]


@dataclass(frozen=True)
class ContinuousResponses(ResponseTable):
    """Scores of N subjects on J items, ``values`` (N, J) float64 in [0, 1] or NaN
    (missing). Infinite scores, scores outside [0, 1] and a matrix without any answer
    are refused."""

    subject_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    values: FloatArray

    def __post_init__(self) -> None:
        raw = np.asarray(self.values)
        if not np.issubdtype(raw.dtype, np.number) or np.issubdtype(raw.dtype, np.complexfloating):
            raise ResponseDataError(f"scores must be real numbers, got dtype {raw.dtype}")
        check_layout(raw, self.subject_ids, self.item_ids)
        arr = raw.astype(np.float64)
        bad = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ResponseDataError(
                f"score of subject {self.subject_ids[i]!r} on item {self.item_ids[j]!r} is "
                f"{float(arr[i, j]):g}; scores must be in [0, 1] (NaN for missing)"
            )
        arr.flags.writeable = False
        object.__setattr__(self, "values", arr)
        self._check_answered()

    @classmethod
    def from_array(
        cls,
        data: object,
        subject_ids: Sequence[str] | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> ContinuousResponses:
        """From a 2-D array of scores with NaN for missing answers; ids ``s0000``… and
        ``i0000``… unless given."""
        arr, subjects, items = float_table(data, subject_ids, item_ids)
        return cls(subject_ids=subjects, item_ids=items, values=arr)

    @property
    def observed(self) -> BoolArray:
        """True where an answer is present."""
        return np.asarray(~np.isnan(self.values))

    def n_clipped(self, epsilon: float) -> int:
        """How many answers lie outside [ε, 1 − ε] and are moved to its ends by a fit."""
        x = self.values[self.observed]
        return int(((x < epsilon) | (x > 1 - epsilon)).sum())
