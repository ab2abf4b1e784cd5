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
from typing import ClassVar, Literal

import numpy as np

from irt.errors import IRTError, ParamsError
from irt.fit.persons import lz_binary
from irt.models import log_prob_pair
from irt.parameter_set import BinaryItems, bernoulli_probabilities, item_positions
from irt.types import FloatArray

#: The general factor's name when a bifactor model is written in this form.
GENERAL_FACTOR = "general"


class Structure(StrEnum):
    """How the loadings were constrained at calibration."""

    BIFACTOR = "bifactor"
    CONFIRMATORY = "confirmatory"
    EXPLORATORY = "exploratory"


@dataclass(frozen=True)
class MirtParams(BinaryItems):
    """Slopes (items × factors), intercepts, optional lower asymptotes, the factors'
    names and correlation matrix, and which slopes were free (``pattern``; a fixed
    slope is 0). A ``irt.ParameterSet`` on D = ``n_factors`` dimensions: θ is (T, D)."""

    family: ClassVar[Literal["mirt"]] = "mirt"
    scored: ClassVar[Literal[False]] = False

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

    @property
    def n_dimensions(self) -> int:
        return self.n_factors

    @property
    def item_types(self) -> tuple[str, ...]:
        """ "3PL" for every item with a lower asymptote, "2PL" without, (J,)."""
        return ("3PL" if self.guessing else "2PL",) * self.n_items

    def points(self, theta: object) -> FloatArray:
        """``theta`` as (T, D) points, checked against the factors."""
        th = np.array(theta, dtype=np.float64, ndmin=2)
        if th.ndim != 2 or th.shape[1] != self.n_factors:
            raise ParamsError(f"θ must have {self.n_factors} columns, got shape {th.shape}")
        return th

    def probabilities(self, theta: object) -> FloatArray:
        """(P(wrong), P(right)) at ``theta`` (T, D), shape (T, J, 2)."""
        return bernoulli_probabilities(self.probability(self.points(theta)))

    def expected_score(self, theta: object) -> FloatArray:
        """P(right) at ``theta`` (T, D), shape (T, J)."""
        return self.probability(self.points(theta))

    def variance(self, theta: object) -> FloatArray:
        p = self.probability(self.points(theta))
        return np.asarray(p * (1.0 - p))

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information matrices w a aᵀ, w = P′(z)²/(P(1 − P)), shape
        (T, J, D, D)."""
        th = self.points(theta)
        sig = 1.0 / (1.0 + np.exp(-self.logits(th)))
        floor = np.zeros(self.n_items) if self.c is None else self.c
        p = floor + (1.0 - floor) * sig
        slope = (1.0 - floor) * sig * (1.0 - sig)
        weight = slope**2 / np.clip(p * (1.0 - p), 1e-300, None)
        outer = self.slopes[:, :, None] * self.slopes[:, None, :]
        return np.asarray(weight[:, :, None, None] * outer[None])

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ), shape (T, D, D)."""
        return np.asarray(self.information(theta).sum(axis=1))

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """Log-likelihood of each row of 0/1 ``responses`` (T, J; NaN = missing) at its
        own θ (a row of ``theta`` (T, D)), (T,)."""
        th = self.points(theta)
        y = np.atleast_2d(np.asarray(responses, dtype=np.float64))
        if y.shape != (th.shape[0], self.n_items):
            raise ParamsError(
                f"responses have shape {y.shape}, expected {(th.shape[0], self.n_items)}"
            )
        seen = np.isfinite(y)
        floor = np.zeros(self.n_items) if self.c is None else self.c
        log_p, log_q = log_prob_pair(self.logits(th), floor, np.ones(self.n_items))
        terms = np.where(seen, np.where(y == 1, log_p, log_q), 0.0)
        return np.asarray(terms.sum(axis=1))

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """A 0/1 answer per (θ_n, item_n) pair, θ (N, D), (N,)."""
        th = self.points(theta)
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        z = (th * self.slopes[pos]).sum(axis=1) + self.d[pos]
        sig = 1.0 / (1.0 + np.exp(-z))
        prob = sig if self.c is None else self.c[pos] + (1.0 - self.c[pos]) * sig
        return np.asarray(rng.random(pos.size) < prob, dtype=np.float64)

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """lz (``irt.fit.persons.lz_binary``) at one point ``theta`` (D,)."""
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        y = np.asarray(responses, dtype=np.float64).reshape(-1)
        if y.shape != pos.shape or not np.isin(y, (0.0, 1.0)).all():
            raise ParamsError("person fit needs one 0/1 response per item")
        return lz_binary(y, self.probability(self.points(theta))[0, pos])

    def subset(self, items: object) -> MirtParams:
        """The same model restricted to ``items`` (ids, indices or a boolean mask)."""
        idx = item_positions(self.item_ids, items)
        return MirtParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
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
