"""One interface for every fitted parameter set: ``ParameterSet``.

Binary 1–4PL (``ItemParams``), scored (``PolytomousParams``), continuous
(``ContinuousParams``), mixed (``MixedParams``), multidimensional (``MirtParams``,
``MirtPolytomousParams``) and bifactor (``BifactorParams``) items answer the same
questions the same way, so that code above ``irt`` (the adaptive engine, scoring,
prediction, reports) asks ``params.expected_score(theta)`` instead of telling the
classes apart. The free functions of each module (``irt.models.probability`` and the
rest) keep working; the methods delegate to them.

Shapes, for T abilities and J items:

- ``theta`` is (T,) for a set on one latent trait (``n_dimensions`` 1) and (T, D) points
  for a multidimensional one (``MirtParams``, ``MirtPolytomousParams``,
  ``BifactorParams``, whose D counts the general factor and every specific one; the
  bifactor's columns are ``BifactorParams.to_mirt``'s factors).
- ``probabilities(theta)`` is (T, J, K), K the most categories of any item, 0 beyond an
  item's own: (1 − P, P) for a binary item, P(X = 0..m) for a graded one. A continuous
  score in [0, 1] has no categories; its row is the two-point reading (1 − E[x | θ],
  E[x | θ]) on the scores 0 and 1, which keeps ``expected_score = Σ_k k P_k`` true for
  every item.
- ``expected_score``, ``variance`` (of the score on the item's own scale, 0..m or [0, 1])
  are (T, J); ``information`` is (T, J) on one trait and (T, J, D, D) Fisher information
  matrices on D; ``log_likelihood`` is (T,), row t of the responses at θ_t.

The two class-level facts ``family`` and ``scored`` are typed as literals on each class,
so that a check such as ``if params.scored:`` narrows a union of classes for the type
checker without naming one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, Self, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from irt.errors import ParamsError
from irt.types import BoolArray, FloatArray, IntArray

__all__ = [
    "BinaryItems",
    "CategoryItems",
    "Family",
    "ParameterSet",
    "UnitScores",
    "bernoulli_probabilities",
    "categorical_log_likelihood",
    "categorical_variance",
    "draw_categories",
    "item_positions",
    "one_theta",
]

#: The kind of a parameter set: what its parameter files hold and its responses are.
Family = Literal[
    "binary", "polytomous", "continuous", "mixed", "mirt", "mirt_polytomous", "bifactor"
]


@runtime_checkable
class ParameterSet(Protocol):
    """What every fitted parameter set answers (shapes in the module's docstring)."""

    @property
    def family(self) -> Family:
        """The class's kind: for the file format and messages, not for the math."""
        ...

    @property
    def scored(self) -> bool:
        """Whether answers are scores read off category curves or densities (0..m_j,
        or in [0, 1]), rather than the 0/1 answers of the binary logistic form (1–4PL,
        M2PL/M3PL, bifactor). A scored set of 2PL items only is still scored."""
        ...

    @property
    def item_ids(self) -> tuple[str, ...]: ...

    @property
    def n_items(self) -> int: ...

    @property
    def n_dimensions(self) -> int:
        """Latent dimensions: 1 on one trait, the factors of a multidimensional model."""
        ...

    @property
    def item_types(self) -> tuple[str, ...]:
        """Each item's model ("3pl", "graded", "crm", "2PL"…), (J,)."""
        ...

    @property
    def max_scores(self) -> npt.NDArray[Any]:
        """Each item's top score, (J,): 1 for binary and continuous items, m_j for an
        item scored 0..m_j."""
        ...

    @property
    def is_continuous(self) -> BoolArray:
        """Whether each item's score is continuous in [0, 1], (J,)."""
        ...

    def probabilities(self, theta: object) -> FloatArray:
        """Category probabilities, (T, J, K)."""
        ...

    def expected_score(self, theta: object) -> FloatArray:
        """E[X_j | θ] on each item's own scale, (T, J)."""
        ...

    def variance(self, theta: object) -> FloatArray:
        """Var[X_j | θ] on each item's own scale, (T, J)."""
        ...

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information, (T, J); (T, J, D, D) on D dimensions."""
        ...

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ), (T,); (T, D, D) on D dimensions."""
        ...

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """Log-likelihood of each row of ``responses`` (T, J; NaN = missing) at its own
        θ, (T,)."""
        ...

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """One response per (θ_n, item_n) pair drawn from the model, (N,)."""
        ...

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """lz (``irt.fit.persons``) of one examinee's ``responses`` to the items at
        positions ``items``, at ``theta``; continuous items are left out (lz is for
        discrete scores); NaN when nothing is left or it has no variance."""
        ...

    def subset(self, items: object) -> Self:
        """The items selected by ids (a str or a sequence of str) or by a numpy index
        (positions or a mask)."""
        ...


class UnitScores:
    """A base of the parameter classes, holding ``item_ids``, whose every item is scored
    on [0, 1]: right or wrong (``BinaryItems``) or continuous (``ContinuousParams``)."""

    item_ids: tuple[str, ...]

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def max_scores(self) -> FloatArray:
        """1 for every item, (J,)."""
        return np.ones(self.n_items)


class BinaryItems(UnitScores):
    """A base of the parameter classes whose items are all answered right or wrong
    (1–4PL, M2PL/M3PL, bifactor): none is continuous."""

    @property
    def is_continuous(self) -> BoolArray:
        return np.zeros(self.n_items, dtype=bool)


class CategoryItems:
    """A base of the parameter classes whose item j is scored in categories 0..m_j (the
    polytomous models on one θ and on factors), holding ``item_ids`` and the thresholds
    ``d`` (J, max m), d_1..d_{m_j} then NaN: every answer-side fact comes from
    ``log_probs`` and ``information``, which the class defines."""

    item_ids: tuple[str, ...]
    d: FloatArray

    def log_probs(self, theta: object) -> FloatArray:
        """log P(X_j = k | θ_t), shape (T, J, max K); −inf beyond an item's categories."""
        raise NotImplementedError

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information at each θ_t, (T, J) on one trait, (T, J, D, D) on D."""
        raise NotImplementedError

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_categories(self) -> IntArray:
        """m_j + 1 for every item, (J,)."""
        return np.asarray(np.count_nonzero(~np.isnan(self.d), axis=1) + 1, dtype=np.int_)

    @property
    def max_scores(self) -> IntArray:
        return self.n_categories - 1

    @property
    def is_continuous(self) -> BoolArray:
        return np.zeros(self.n_items, dtype=bool)

    def probabilities(self, theta: object) -> FloatArray:
        """P(X_j = k | θ_t), shape (T, J, max K); 0 beyond an item's categories."""
        return np.asarray(np.exp(self.log_probs(theta)))

    def expected_score(self, theta: object) -> FloatArray:
        """E[X_j | θ_t] = Σ_k k P_k, shape (T, J)."""
        p = self.probabilities(theta)
        return np.asarray(p @ np.arange(p.shape[-1], dtype=np.float64))

    def variance(self, theta: object) -> FloatArray:
        """Var[X_j | θ_t] = Σ_k k² P_k − E[X_j | θ_t]², shape (T, J)."""
        return categorical_variance(self.probabilities(theta))

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ_t), shape (T,) on one trait, (T, D, D) on D."""
        return np.asarray(self.information(theta).sum(axis=1))

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """Log-likelihood of each row of scores ``responses`` (T, J; NaN = missing) at
        its own θ (row t of ``theta``), (T,)."""
        return categorical_log_likelihood(self.log_probs(theta), responses)


def item_positions(item_ids: Sequence[str], items: object) -> IntArray:
    """Positions in ``item_ids`` of the items selected by ids (a str or a sequence of
    str, in that order) or by a numpy index (a mask or positions)."""
    if isinstance(items, str):
        items = [items]
    if isinstance(items, np.ndarray) and items.dtype.kind == "U":
        items = items.tolist()
    if isinstance(items, Sequence) and items and all(isinstance(x, str) for x in items):
        own = {item: j for j, item in enumerate(item_ids)}
        unknown = [x for x in items if x not in own]
        if unknown:
            raise ParamsError(f"unknown item id {unknown[0]!r}")
        return np.array([own[cast(str, x)] for x in items], dtype=np.int_)
    return np.asarray(np.arange(len(item_ids))[cast(Any, items)], dtype=np.int_)


def bernoulli_probabilities(p: FloatArray) -> FloatArray:
    """(1 − p, p) along a new last axis."""
    return np.asarray(np.stack([1.0 - p, p], axis=-1), dtype=np.float64)


def categorical_variance(prob: FloatArray) -> FloatArray:
    """Var of the score 0..K−1 under category probabilities ``prob`` (..., K), (...)."""
    k = np.arange(prob.shape[-1], dtype=np.float64)
    mean = prob @ k
    return np.asarray(prob @ k**2 - mean**2)


def categorical_log_likelihood(log_p: FloatArray, responses: object) -> FloatArray:
    """Σ_j log P(X_j = x_tj) of each row t, from log category probabilities ``log_p``
    (T, J, K) at row t's θ and scores ``responses`` (T, J; NaN = missing), (T,)."""
    x = np.atleast_2d(np.asarray(responses, dtype=np.float64))
    if x.shape != log_p.shape[:2]:
        raise ParamsError(f"responses have shape {x.shape}, expected {log_p.shape[:2]}")
    seen = np.isfinite(x)
    k = np.where(seen, x, 0).astype(np.int_)
    if np.any(seen & ((k != x) | (k < 0) | (k >= log_p.shape[2]))):
        raise ParamsError("a response is not one of its item's scores 0..m")
    picked = np.take_along_axis(log_p, k[..., None], axis=2)[..., 0]
    return np.asarray(np.where(seen, picked, 0.0).sum(axis=1), dtype=np.float64)


def one_theta(theta: object) -> float:
    """One θ on one trait, given as a number or a one-element array."""
    values = np.asarray(theta, dtype=np.float64).reshape(-1)
    if values.size != 1:
        raise ParamsError(f"one θ is needed here, got {values.size}")
    return float(values[0])


def draw_categories(prob: FloatArray, rng: np.random.Generator) -> FloatArray:
    """One score 0..K−1 per row of category probabilities ``prob`` (N, K), by inverting
    the cumulative sum at one uniform draw per row, (N,)."""
    cumulative = np.cumsum(prob, axis=1)
    u = rng.random(len(prob)) * cumulative[:, -1]
    return np.asarray((u[:, None] >= cumulative[:, :-1]).sum(axis=1), dtype=np.float64)
