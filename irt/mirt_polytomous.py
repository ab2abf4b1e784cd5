"""Multidimensional items with two or more ordered or nominal categories, in the
slope–intercept form R mirt writes them in (Chalmers 2012). With η = a·θ (a row of
slopes over the D factors):

- ``2PL`` — P(X = 1) = σ(η + d);
- ``graded`` — P(X ≥ k) = σ(η + d_k), k = 1..m, d_1 > … > d_m (Samejima 1969);
- ``gpcm`` — P(X = k) ∝ exp(k·η + d_k), d_0 = 0 (Muraki 1992);
- ``nominal`` — P(X = k) ∝ exp(ak_k·η + d_k) with ak_0 = 0, ak_m = m and d_0 = 0 fixed
  and ak_1..ak_{m−1} free (Bock 1972 in Thissen, Cai & Bock's 2010 parametrisation, as
  mirt's ``nominal``): the gpcm is the nominal item with ak_k = k.

Every model depends on θ only through η, and its curves (with their derivatives) are
those of its item family (``irt.families``), the same objects as for the items on one θ
of ``irt.polytomous``. ∂ log P_k/∂θ = a·S_k with S_k = ∂ log P_k/∂η, so the Fisher
information matrix of an item is a aᵀ Σ_k P_k S_k².

Parameters of a pool live in ``MirtPolytomousParams``: slopes (items × factors) with a
loading pattern, thresholds d_1..d_m padded with NaN into (J, max m), the scoring
values ak_1..ak_m of gpcm and nominal items likewise (NaN for 2PL and graded items),
and the factors' correlation matrix (unit variances, zero means).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

import numpy as np

from irt.errors import ParamsError
from irt.families import CategoryCurves, FamilyName, ItemFamily, category_curves
from irt.fit.persons import lz_categories
from irt.item_checks import checked_item_types, item_type
from irt.item_groups import GroupLayout, ItemGroup
from irt.parameter_set import CategoryItems, draw_categories, item_positions
from irt.polytomous import check_item_values, fill_scoring_values, pad_thresholds
from irt.types import BoolArray, FloatArray

__all__ = [
    "CategoryGroup",
    "CategoryLayout",
    "GroupCurves",
    "MirtPolytomousParams",
    "MultiItemType",
    "group_curves",
]


class MultiItemType(FamilyName):
    """An item model on several factors; the value is R mirt's ``itemtype`` name, and
    the member's ``family`` (``irt.families``) holds its curves."""

    TWO_PL = "2PL"
    GRADED = "graded"
    GPCM = "gpcm"
    NOMINAL = "nominal"

    @classmethod
    def accepts(cls, family: ItemFamily) -> bool:
        # The factors' fits have no lower asymptote to estimate.
        return super().accepts(family) and not family.has_guessing


#: The curves of ``group_curves``: ``slope`` is S_k = ∂ log P_k/∂η, ``thresholds``
#: ∂ log P_k/∂d_l and ``scores`` ∂ log P_k/∂ak_l of a nominal item's free ak.
GroupCurves = CategoryCurves

#: Curves of items of type ``kind`` at η (Q, J) (one column per item), thresholds ``d``
#: (J, m) without padding and scoring values ``ak`` (J, m) (nominal items): the item
#: family's, as on one θ.
group_curves = category_curves


@dataclass(frozen=True)
class CategoryGroup(ItemGroup[MultiItemType]):
    """Items of one type with ``n_cat`` categories: their positions in the pool and the
    columns (J_g, K) of their (item, score) pairs among the pattern indicators."""

    @property
    def n_free_ak(self) -> int:
        """Free scoring values per item: ak_1..ak_{m−1} of a nominal item."""
        return self.kind.family.free_scores(self.m)


class CategoryLayout(GroupLayout[CategoryGroup]):
    """The groups of like items (``CategoryGroup``) of a multidimensional pool."""

    group_type = CategoryGroup


@dataclass(frozen=True)
class MirtPolytomousParams(CategoryItems):
    """J items of mixed types on D factors θ ~ N(0, R), mirt's slope–intercept form.

    ``slopes`` (J, D), 0 outside ``pattern`` (J, D) (the free slopes); ``d`` (J, max m)
    thresholds d_1..d_m, NaN beyond an item's m; ``ak`` (J, max m) the scoring values
    ak_1..ak_m of gpcm (1..m) and nominal (ak_m = m) items, NaN elsewhere;
    ``correlation`` (D, D) with unit diagonal. A ``irt.ParameterSet`` on D =
    ``n_factors`` dimensions: θ is (T, D).
    """

    family: ClassVar[Literal["mirt_polytomous"]] = "mirt_polytomous"
    scored: ClassVar[Literal[True]] = True

    item_ids: tuple[str, ...]
    item_types: tuple[MultiItemType, ...]
    slopes: FloatArray
    d: FloatArray
    ak: FloatArray
    factors: tuple[str, ...]
    correlation: FloatArray
    pattern: BoolArray

    def __post_init__(self) -> None:
        n, k = len(self.item_ids), len(self.factors)
        types = checked_item_types(MultiItemType, self.item_ids, self.item_types)
        object.__setattr__(self, "item_types", types)
        if k < 1 or len(set(self.factors)) != k:
            raise ParamsError("a model needs at least one factor, each with its own name")
        slopes = np.array(self.slopes, dtype=np.float64, ndmin=2)
        pattern = np.array(self.pattern, dtype=bool, ndmin=2)
        if slopes.shape != (n, k) or pattern.shape != (n, k):
            raise ParamsError(f"slopes and pattern must be items × factors ({n} × {k})")
        if np.any(slopes[~pattern] != 0) or not np.all(np.isfinite(slopes)):
            raise ParamsError("slopes must be finite and 0 outside the loading pattern")
        d = np.array(self.d, dtype=np.float64, ndmin=2)
        ak = np.array(self.ak, dtype=np.float64, ndmin=2)
        if d.ndim != 2 or d.shape[0] != n or d.shape[1] < 1 or ak.shape != d.shape:
            raise ParamsError(f"d and ak must both have shape ({n}, max m), got {d.shape}")
        corr = np.array(self.correlation, dtype=np.float64, ndmin=2)
        if (
            corr.shape != (k, k)
            or not np.allclose(corr, corr.T)
            or not np.allclose(np.diag(corr), 1.0)
            or np.min(np.linalg.eigvalsh(corr)) <= 0
        ):
            raise ParamsError("the factor correlation must be positive definite, unit diagonal")
        for name, value in (("slopes", slopes), ("pattern", pattern), ("d", d), ("ak", ak)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "correlation", corr)
        for j in range(n):
            self._check_item(j)

    def _check_item(self, j: int) -> None:
        check_item_values(self.item_types[j].family, self.item_ids[j], self.d[j], self.ak[j])

    @classmethod
    def create(
        cls,
        item_types: Sequence[MultiItemType | str] | MultiItemType | str,
        slopes: object,
        d: Sequence[Sequence[float]] | FloatArray,
        ak: Sequence[Sequence[float]] | FloatArray | None = None,
        *,
        pattern: object | None = None,
        correlation: object | None = None,
        factors: Sequence[str] | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> MirtPolytomousParams:
        """From slopes (J, D), ragged thresholds and, for nominal items, ragged ak_1..ak_m
        (gpcm items get 1..m when ``ak`` is None or their row is empty); the pattern is
        where the slopes are not 0 unless given, R = I unless given."""
        a = np.array(slopes, dtype=np.float64, ndmin=2)
        n, k = a.shape
        ids = tuple(item_ids) if item_ids is not None else tuple(f"i{j:04d}" for j in range(n))
        raw = [item_types] * n if isinstance(item_types, str) else list(item_types)
        if len(raw) != n or len(ids) != n:
            raise ParamsError(f"{n} items need {n} item types and ids")
        types = [item_type(MultiItemType, t, item) for t, item in zip(raw, ids, strict=True)]
        dd = pad_thresholds(d)
        scores = fill_scoring_values(
            types, dd, np.empty((0, 0)) if ak is None else pad_thresholds(ak)
        )
        return cls(
            item_ids=ids,
            item_types=tuple(cast(Any, types)),
            slopes=a,
            d=dd,
            ak=scores,
            factors=tuple(factors) if factors is not None else tuple(f"F{i + 1}" for i in range(k)),
            correlation=np.eye(k) if correlation is None else np.asarray(correlation, dtype=float),
            pattern=a != 0 if pattern is None else np.asarray(pattern, dtype=bool),
        )

    @property
    def n_factors(self) -> int:
        return len(self.factors)

    @property
    def n_dimensions(self) -> int:
        return self.n_factors

    def layout(self) -> CategoryLayout:
        return CategoryLayout.of(self.item_types, self.n_categories)

    def groups(self) -> Iterator[CategoryGroup]:
        yield from self.layout().groups

    def group_parameters(
        self, g: CategoryGroup
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """The group's slopes (J_g, D), thresholds (J_g, m) and scoring values (J_g, m)
        (None for 2PL and graded items)."""
        ak = self.ak[g.items, : g.m] if g.kind.scored else None
        return self.slopes[g.items], self.d[g.items, : g.m], ak

    def curves(self, theta: object, g: CategoryGroup, derivatives: bool = False) -> GroupCurves:
        """The curves of group ``g`` at ``theta`` (T, D)."""
        th = self._theta(theta)
        a, d, ak = self.group_parameters(g)
        return group_curves(g.kind, th @ a.T, d, ak, derivatives=derivatives)

    def _theta(self, theta: object) -> FloatArray:
        th = np.array(theta, dtype=np.float64, ndmin=2)
        if th.shape[-1] != self.n_factors:
            raise ParamsError(f"θ must have {self.n_factors} columns, got shape {th.shape}")
        return th

    def log_probs(self, theta: object) -> FloatArray:
        """log P(X_j = k | θ_t), shape (T, J, max K); −inf beyond an item's categories."""
        th = self._theta(theta)
        out = np.full((th.shape[0], self.n_items, int(self.n_categories.max())), -np.inf)
        for g in self.groups():
            out[:, g.items, : g.n_cat] = self.curves(th, g).log_p
        return out

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information matrices a aᵀ Σ_k P_k S_k², shape (T, J, D, D)."""
        th = self._theta(theta)
        out = np.empty((th.shape[0], self.n_items, self.n_factors, self.n_factors))
        for g in self.groups():
            cv = self.curves(th, g, derivatives=True)
            assert cv.slope is not None
            weight = (np.exp(cv.log_p) * cv.slope**2).sum(axis=-1)  # (T, J_g)
            a = self.slopes[g.items]
            out[:, g.items] = weight[:, :, None, None] * (a[:, :, None] * a[:, None, :])[None]
        return out

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """A score per (θ_n, item_n) pair, θ (N, D), drawn from the item's categories."""
        th = self._theta(theta)
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        if th.shape[0] != pos.size:
            raise ParamsError(f"{th.shape[0]} abilities for {pos.size} items")
        # Every item at every θ_n, then the pairs: simple, and N × J is small here.
        prob = self.probabilities(th)[np.arange(pos.size), pos]
        return draw_categories(np.asarray(prob), rng)

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """lz (``irt.fit.persons.lz_categories``) at one point ``theta`` (D,)."""
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        x = np.asarray(responses, dtype=np.float64).reshape(-1)
        top = self.max_scores[pos]
        if x.shape != pos.shape or np.any((x != np.round(x)) | (x < 0) | (x > top)):
            raise ParamsError("person fit needs one whole score 0..m per item")
        return lz_categories(x, self.log_probs(self._theta(theta))[0, pos])

    def subset(self, items: object) -> MirtPolytomousParams:
        """The items selected by ids or a numpy index, in that order; the NaN padding is
        trimmed to the widest item kept."""
        idx = item_positions(self.item_ids, items)
        width = int(self.n_categories[idx].max()) - 1 if idx.size else 1
        return MirtPolytomousParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
            item_types=tuple(self.item_types[k] for k in idx),
            slopes=self.slopes[idx],
            d=self.d[idx, :width],
            ak=self.ak[idx, :width],
            factors=self.factors,
            correlation=self.correlation,
            pattern=self.pattern[idx],
        )

    def coefficients(self, item: int | str) -> dict[str, float]:
        """One item's parameters named as mirt's ``coef()`` names them (a1.., d1.. or d,
        ak1..akm for gpcm/nominal; mirt's fixed ak0 = d0 = 0 left out)."""
        j = self.item_ids.index(item) if isinstance(item, str) else int(item)
        m = int(self.n_categories[j]) - 1
        out = {f"a{f + 1}": float(self.slopes[j, f]) for f in range(self.n_factors)}
        if self.item_types[j].scored:
            out.update({f"ak{k + 1}": float(self.ak[j, k]) for k in range(m)})
        if self.item_types[j].binary:
            out["d"] = float(self.d[j, 0])
        else:
            out.update({f"d{k + 1}": float(self.d[j, k]) for k in range(m)})
        return out
