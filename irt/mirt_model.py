"""The compensatory multidimensional 2PL/3PL (M2PL/M3PL), the one form every
multidimensional model of this package is written in for scoring and adaptive testing:

    P(x_ij = 1) = c_j + (1 − c_j)·σ(a_j·θ_i + d_j),     θ_i ~ N(0, Σ)

with ``a_j`` a row of slopes over the D factors, ``Σ`` the factors' correlation matrix
(unit diagonal) and ``c`` absent in the M2PL. A bifactor model is the special case with
factors (general, S_1..S_K), each item loading on the general factor and at most one
specific factor, and Σ = I; a confirmatory model fixes some slopes at 0 (``pattern``);
an exploratory model frees all but the identifying triangle.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from irt.errors import IRTError
from irt.types import FloatArray

#: The general factor's name when a bifactor model is written in this form.
GENERAL_FACTOR = "general"


class Structure(StrEnum):
    """How the loadings were constrained at calibration."""

    BIFACTOR = "bifactor"
    CONFIRMATORY = "confirmatory"
    EXPLORATORY = "exploratory"


@dataclass(frozen=True)
class MirtParams:
    """Slopes (items × factors), intercepts, optional lower asymptotes, the factors'
    names and correlation matrix, and which slopes were free (``pattern``; a fixed
    slope is 0)."""

    item_ids: tuple[str, ...]
    slopes: FloatArray
    d: FloatArray
    factors: tuple[str, ...]
    correlation: FloatArray
    pattern: np.ndarray
    structure: Structure
    c: FloatArray | None = None

    def __post_init__(self) -> None:
        n, k = len(self.item_ids), len(self.factors)
        if k < 1:
            raise IRTError("a multidimensional model needs at least one factor")
        if np.shape(self.slopes) != (n, k) or np.shape(self.pattern) != (n, k):
            raise IRTError(f"slopes and pattern must be items × factors ({n} × {k})")
        if np.shape(self.d) != (n,):
            raise IRTError(f"d must have one value per item ({n})")
        if self.c is not None and (
            np.shape(self.c) != (n,) or np.any(self.c < 0) or np.any(self.c >= 1)
        ):
            raise IRTError(f"c must have one value in [0, 1) per item ({n})")
        corr = np.asarray(self.correlation)
        if (
            corr.shape != (k, k)
            or not np.allclose(corr, corr.T)
            or not np.allclose(np.diag(corr), 1.0)
        ):
            raise IRTError("the factor correlation must be a symmetric matrix with unit diagonal")
        if np.min(np.linalg.eigvalsh(corr)) <= 0:
            raise IRTError("the factor correlation matrix must be positive definite")
        if np.any(np.asarray(self.slopes)[~np.asarray(self.pattern, dtype=bool)] != 0):
            raise IRTError("a slope outside the loading pattern must be 0")
        if len(set(self.factors)) != k:
            raise IRTError("factor names repeat")

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_factors(self) -> int:
        return len(self.factors)

    @property
    def guessing(self) -> bool:
        return self.c is not None

    def logits(self, theta: FloatArray) -> FloatArray:
        """a·θ + d: ``theta`` (..., D) gives (..., items)."""
        return np.asarray(np.asarray(theta) @ self.slopes.T + self.d)

    def probability(self, theta: FloatArray) -> FloatArray:
        """P(right) at ``theta`` (..., D), shape (..., items)."""
        sigma = 1.0 / (1.0 + np.exp(-self.logits(theta)))
        return sigma if self.c is None else self.c + (1.0 - self.c) * sigma

    def subset(self, items: np.ndarray) -> MirtParams:
        """The same model restricted to ``items`` (indices or a boolean mask)."""
        idx = np.asarray(items)
        return MirtParams(
            item_ids=tuple(np.asarray(self.item_ids, dtype=object)[idx]),
            slopes=self.slopes[idx],
            d=self.d[idx],
            factors=self.factors,
            correlation=self.correlation,
            pattern=self.pattern[idx],
            structure=self.structure,
            c=None if self.c is None else self.c[idx],
        )

    def n_free_parameters(self) -> int:
        """Free slopes, intercepts, asymptotes and off-diagonal correlations that are not
        0 (a correlation fixed at 0 is not counted)."""
        corr = np.asarray(self.correlation)
        free_corr = int(np.count_nonzero(np.triu(corr, k=1)))
        return (
            int(np.count_nonzero(self.pattern))
            + self.n_items * (2 if self.c is not None else 1)
            + free_corr
        )
