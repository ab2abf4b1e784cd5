"""Standard errors from the observed information, for every model that has an exact
gradient of its marginal log posterior (Fisher's identity: the complete-data gradient
under the E-step's posterior).

Oakes (1999), R mirt's default ``SE.type``: the Hessian is central differences of that
exact gradient, symmetrised, and the covariance its negative inverse. Where the
information is near-singular (a parameter at a bound carries none) it is inverted item
by item instead, with NaN where even an item's block stays singular. The
one-θ graded, nominal and continuous fits and the mixed fit all take their errors
from here; each supplies its gradient and its items' widths.

The cross-product (XPD) errors of the binary, factor and bifactor fits (R mirt's
``SE.type = "crossprod"``) sum each item's per-subject scores' outer products into a
block of its own and invert the blocks here (``invert_item_blocks``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from irt.types import BoolArray, FloatArray

__all__ = [
    "HESSIAN_STEP",
    "ITEM_BLOCK_CONDITION",
    "MAX_CONDITION",
    "hessian_of_gradient",
    "invert_information",
    "invert_item_blocks",
    "relative_steps",
    "root_variance",
]

#: Relative step of the numerical Hessian.
HESSIAN_STEP = 1e-5
#: An information matrix with a larger condition number is inverted item by item.
MAX_CONDITION = 1e12
#: An item's cross-product block with a larger condition number is taken as singular:
#: its parameters are not identified by the data (and no prior pins them).
ITEM_BLOCK_CONDITION = 1e10


def relative_steps(x: FloatArray) -> FloatArray:
    """Difference steps relative to each coordinate's size (at least ``HESSIAN_STEP``)."""
    return np.asarray(HESSIAN_STEP * np.maximum(1.0, np.abs(x)))


def hessian_of_gradient(
    gradient: Callable[[FloatArray], FloatArray],
    x: FloatArray,
    steps: FloatArray,
    progress: Callable[[int, int], None] | None = None,
) -> FloatArray:
    """Central differences of the exact ``gradient`` at ``x`` with ``steps``,
    symmetrised; ``progress(done, total)`` after each coordinate (two gradients each)."""
    n = x.size
    hess = np.empty((n, n))
    for i in range(n):
        h = float(steps[i])
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        hess[:, i] = (gradient(up) - gradient(down)) / (2 * h)
        if progress is not None:
            progress(i + 1, n)
    return np.asarray(0.5 * (hess + hess.T))


def invert_information(info: FloatArray, widths: Sequence[int]) -> FloatArray:
    """The covariance matrix: the whole information inverted, or, where it is
    near-singular, item by item (``widths``: each item's number of parameters, in flat
    order) with NaN for blocks that stay singular and between items."""
    if np.all(np.isfinite(info)) and np.linalg.cond(info) < MAX_CONDITION:
        return np.asarray(np.linalg.inv(info))
    cov = np.full_like(info, np.nan)
    at = 0
    for w in widths:
        sl = slice(at, at + w)
        block = info[sl, sl]
        if np.all(np.isfinite(block)) and np.linalg.cond(block) < MAX_CONDITION:
            cov[sl, sl] = np.linalg.inv(block)
        at += w
    return cov


def invert_item_blocks(info: FloatArray, use: BoolArray) -> FloatArray:
    """Each item's covariance block (J, P, P): the inverse of its information ``info``
    (J, P, P) over the coordinates ``use`` (J, P) marks, NaN elsewhere and where that
    block is singular. Items share few layouts, so each layout's blocks are inverted
    together."""
    cov = np.full_like(info, np.nan)
    layouts, which = np.unique(np.asarray(use, dtype=bool), axis=0, return_inverse=True)
    for layout_no, layout in enumerate(layouts):
        coords = np.flatnonzero(layout)
        if not coords.size:
            continue
        idx = np.flatnonzero(which.ravel() == layout_no)
        sub = info[np.ix_(idx, coords, coords)]
        ok = np.all(np.isfinite(sub), axis=(1, 2))
        ok[ok] = np.linalg.cond(sub[ok]) < ITEM_BLOCK_CONDITION
        if ok.any():
            cov[np.ix_(idx[ok], coords, coords)] = np.linalg.inv(sub[ok])
    return cov


def root_variance(var: FloatArray) -> FloatArray:
    """√var, NaN where the variance is not positive."""
    return np.where(var > 0, np.sqrt(np.where(var > 0, var, 1.0)), np.nan)
