"""Which design a pool runs: the one whose predictions erred least on the pool's own
references when each was left out of the fit (cross-fitted), at the test's length.

``cat validate``'s "auto" row and ``cat assess``'s default both apply this one rule, so
the row measures what ``cat assess`` does. Never the held-out (or new) model's errors:
only the references'."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cat.errors import CatError
from irt.types import FloatArray


def smallest_error(abs_errors: Mapping[str, FloatArray]) -> str:
    """The name whose absolute errors have the smallest mean (the first on a tie, in the
    mapping's order)."""
    if not abs_errors:
        raise CatError("no design has cross-fitted errors to choose by")
    return min(abs_errors, key=lambda name: float(np.mean(np.abs(abs_errors[name]))))
