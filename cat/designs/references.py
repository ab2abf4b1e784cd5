"""The reference models' answers as one dense matrix, the form both designs work on."""

from __future__ import annotations

import numpy as np

from cat.errors import CatError
from irt.types import BoolArray, FloatArray


def reference_answers(values: np.ndarray, observed: BoolArray) -> FloatArray:
    """(N, J) answers of N references in [0, 1]: 1 right, 0 wrong, and a missing answer
    replaced by the item's share right among the references who answered it (0.5 when
    none did), so that it counts as a coin of that bias rather than as wrong."""
    observed = np.asarray(observed, dtype=bool)
    right = (np.asarray(values) == 1) & observed
    if right.shape != observed.shape or right.ndim != 2:
        raise CatError("reference answers must be one (references, items) matrix")
    if right.shape[0] < 2:
        raise CatError("a reference design needs at least 2 reference models")
    n_seen = observed.sum(axis=0)
    share = np.where(n_seen > 0, right.sum(axis=0) / np.maximum(n_seen, 1), 0.5)
    return np.where(observed, right, share[None, :]).astype(np.float64)
