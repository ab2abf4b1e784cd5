"""Item models for scores 0..m on one latent trait θ ~ N(0, 1), in the slope–intercept
form that R mirt writes them in (Chalmers 2012, ``mirt``'s ``itemtype`` names):

- ``graded`` — graded response model (Samejima 1969): the cumulative curves
  P(X ≥ k) = σ(aθ + d_k), k = 1..m, with d_1 > d_2 > … > d_m, and
  P(X = k) = P(X ≥ k) − P(X ≥ k + 1).
- ``gpcm`` — generalized partial credit model (Muraki 1992) in mirt's form:
  P(X = k) ∝ exp(k·aθ + d_k), d_0 = 0 (the scoring 0, 1, …, m is fixed).
- ``sequential`` — continuation-ratio model (Tutz 1990), mirt's ``sequential``:
  Ψ_k = σ(aθ + d_k) is the chance of passing step k once step k − 1 is passed, so
  P(X = k) = Ψ_1 ⋯ Ψ_k (1 − Ψ_{k+1}) with Ψ_{m+1} = 0.
- ``2PL`` and ``3PL`` — the binary items of ``irt.models``, written as mirt does:
  P(X = 1) = c + (1 − c) σ(aθ + d) (c = 0 in the 2PL; d = −a b in ``irt.models``' terms),
  so a pool of binary and graded items is calibrated on one θ.

Every model depends on θ only through η = aθ, and its curves are those of its item
family (``irt.families``, one module per model, shared with the items on several
factors of ``irt.mirt_polytomous``), computed in log space so that a category far from
the examinee gets a finite log-probability instead of log(0). Derivatives come out in
the same form: for every model ∂ log P_k/∂θ = a S_k and ∂ log P_k/∂a = θ S_k for one
"slope score" S_k = ∂ log P_k/∂η (graded: 1 − P(X ≥ k) − P(X ≥ k + 1); gpcm: k − E[X]),
so the Fisher information is I(θ) = a² Σ_k P_k S_k² without dividing by a small P_k.

Parameters of a pool live in ``PolytomousParams``; the ragged thresholds are padded
with NaN into a (J, max m) array.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, cast

import numpy as np

from irt.errors import ParamsError
from irt.estimation.arrays import is_numpy
from irt.families import CategoryCurves, FamilyName, ItemFamily, category_curves, family_of
from irt.fit.persons import lz_scored
from irt.item_checks import checked_item_types, item_vector
from irt.item_groups import like_groups
from irt.parameter_set import CategoryItems, draw_categories, item_positions, one_theta
from irt.types import FloatArray, IntArray


class ItemType(FamilyName):
    """An item model on one θ; the value is R mirt's ``itemtype`` name, and the member's
    ``family`` (``irt.families``) holds its curves."""

    TWO_PL = "2PL"
    THREE_PL = "3PL"
    GRADED = "graded"
    GPCM = "gpcm"
    SEQUENTIAL = "sequential"
    NOMINAL = "nominal"


#: The curves of ``curves``: ``slope`` is S_k, with ∂ log P_k/∂θ = a S_k and
#: ∂ log P_k/∂a = θ S_k.
Curves = CategoryCurves


def curves(
    kind: ItemType,
    theta: object,
    a: FloatArray,
    d: FloatArray,
    c: FloatArray | None = None,
    *,
    ak: FloatArray | None = None,
    derivatives: bool = False,
) -> Curves:
    """Curves of items of type ``kind`` at ``theta`` (T,): slopes ``a`` (J,), thresholds
    ``d`` (J, m) without padding, lower asymptotes ``c`` (J,) for the 3PL, scoring values
    ``ak`` (J, m) for nominal items; the family's curves at η = aθ. Torch tensors (of
    ``theta`` and the parameters alike) give torch curves on their device."""
    if is_numpy(a):
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        eta = np.asarray(a, dtype=np.float64)[None, :] * th[:, None]
    else:
        eta = a[None, :] * theta.reshape(-1)[:, None]  # type: ignore[attr-defined]
    return category_curves(kind, eta, d, ak, c=c, derivatives=derivatives)


def information_of(cv: Curves, a: FloatArray) -> FloatArray:
    """Fisher information a² Σ_k P_k S_k² of curves computed with derivatives, (T, J)."""
    assert cv.slope is not None
    return np.asarray(a**2 * (np.exp(cv.log_p) * cv.slope**2).sum(axis=-1))


# --- the parameters of a pool ----------------------------------------------------------


def pad_thresholds(rows: Sequence[Sequence[float]] | FloatArray) -> FloatArray:
    """Ragged threshold lists → a (J, max m) array padded with NaN (an array passes)."""
    if isinstance(rows, np.ndarray):
        return np.array(rows, dtype=np.float64, ndmin=2)
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), np.nan)
    for j, r in enumerate(rows):
        out[j, : len(r)] = np.asarray(r, dtype=np.float64)
    return out


@dataclass(frozen=True)
class PolytomousParams(CategoryItems):
    """Parameters of J items of mixed types on one θ, in mirt's slope–intercept form.

    ``a`` (J,) slopes; ``d`` (J, max m) thresholds d_1..d_{m_j}, NaN beyond an item's
    m_j (binary items have the one intercept d_1); ``c`` (J,) lower asymptotes, 0 except
    for 3PL items; ``ak`` (J, max m) the scoring values ak_1..ak_m of gpcm (1..m, fixed)
    and nominal (ak_m = m fixed) items, NaN elsewhere (built from the types when not
    given: no pool without nominal items needs it). Item j has ``n_categories[j]`` =
    m_j + 1 scores 0..m_j. Standard errors are optional and shaped like their parameters
    (NaN where not estimated). A ``irt.ParameterSet``.
    """

    family: ClassVar[Literal["polytomous"]] = "polytomous"
    scored: ClassVar[Literal[True]] = True
    n_dimensions: ClassVar[int] = 1

    item_ids: tuple[str, ...]
    item_types: tuple[ItemType, ...]
    a: FloatArray
    d: FloatArray
    c: FloatArray
    se_a: FloatArray | None = field(default=None, compare=False)
    se_d: FloatArray | None = field(default=None, compare=False)
    se_c: FloatArray | None = field(default=None, compare=False)
    ak: FloatArray | None = None
    se_ak: FloatArray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        types = checked_item_types(ItemType, self.item_ids, self.item_types)
        object.__setattr__(self, "item_types", types)
        object.__setattr__(self, "a", item_vector("a", self.a, n))
        object.__setattr__(self, "c", item_vector("c", self.c, n))
        d = np.array(self.d, dtype=np.float64, ndmin=2)
        if d.ndim != 2 or d.shape[0] != n or d.shape[1] < 1:
            raise ParamsError(f"thresholds d have shape {d.shape}, expected ({n}, max m)")
        object.__setattr__(self, "d", d)
        ak = self._scoring_values(d)
        object.__setattr__(self, "ak", ak)
        for j, item in enumerate(self.item_ids):
            self._check_item(j, item)
        for name, like in (
            ("se_a", self.a),
            ("se_d", self.d),
            ("se_c", self.c),
            ("se_ak", ak),
        ):
            value = getattr(self, name)
            if value is not None:
                arr = np.array(value, dtype=np.float64, ndmin=1)
                if arr.shape != like.shape:
                    raise ParamsError(f"{name} has shape {arr.shape}, expected {like.shape}")
                object.__setattr__(self, name, arr)

    def _scoring_values(self, d: FloatArray) -> FloatArray:
        """``ak`` as given (checked per item), or the fixed values of gpcm items."""
        if self.ak is not None:
            ak = np.array(self.ak, dtype=np.float64, ndmin=2)
            if ak.shape != d.shape:
                raise ParamsError(f"ak has shape {ak.shape}, expected {d.shape} like d")
            return ak
        return fill_scoring_values(self.item_types, d, np.empty((0, 0)))

    def _check_item(self, j: int, item: str) -> None:
        kind = self.item_types[j]
        if not np.isfinite(self.a[j]):
            raise ParamsError(f"item {item!r} has non-finite parameters")
        assert self.ak is not None
        check_item_values(kind.family, item, self.d[j], self.ak[j])
        cj = self.c[j]
        if kind.has_guessing:
            if not 0 <= cj < 1:
                raise ParamsError(f"item {item!r}: the lower asymptote c must be in [0, 1)")
        elif cj != 0:
            raise ParamsError(f"item {item!r} is {kind.value}; only 3PL items have c != 0")

    @classmethod
    def create(
        cls,
        item_types: Sequence[ItemType | str] | ItemType | str,
        a: object,
        d: Sequence[Sequence[float]] | FloatArray,
        c: object | None = None,
        *,
        ak: Sequence[Sequence[float]] | FloatArray | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> PolytomousParams:
        """From slopes, ragged thresholds (lists or a NaN-padded array), optional
        asymptotes and, for nominal items, ragged scoring values ak_1..ak_m (gpcm items
        get 1..m where their row is empty); one type for all items or one per item; ids
        ``i0000``… by default."""
        a_arr = np.array(a, dtype=np.float64, ndmin=1)
        n = a_arr.shape[0]
        types = [item_types] * n if isinstance(item_types, str | ItemType) else list(item_types)
        ids = tuple(item_ids) if item_ids is not None else tuple(f"i{j:04d}" for j in range(n))
        dd = pad_thresholds(d)
        return cls(
            item_ids=ids,
            item_types=tuple(cast(Any, types)),
            a=a_arr,
            d=dd,
            c=np.zeros(n) if c is None else np.array(c, dtype=np.float64, ndmin=1),
            ak=None if ak is None else fill_scoring_values(types, dd, pad_thresholds(ak)),
        )

    def thresholds(self, item: int | str) -> FloatArray:
        """Item ``item``'s thresholds d_1..d_m (no padding)."""
        j = self.item_ids.index(item) if isinstance(item, str) else int(item)
        row = self.d[j]
        return np.asarray(row[~np.isnan(row)])

    def groups(self) -> Iterator[tuple[ItemType, int, IntArray]]:
        """(type, number of categories, item positions) of each group of like items: the
        unit every vectorised computation works on."""
        return like_groups(self.item_types, self.n_categories)

    def group_values(
        self, kind: ItemType, idx: IntArray, m: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """(a, d, c, ak) of items ``idx`` of type ``kind`` with m thresholds; ak is None
        unless the family has scoring values."""
        assert self.ak is not None
        ak = self.ak[idx, :m] if kind.scored else None
        return self.a[idx], self.d[idx, :m], self.c[idx], ak

    def group_curves(
        self, theta: object, kind: ItemType, n_cat: int, idx: IntArray, derivatives: bool = False
    ) -> Curves:
        a, d, c, ak = self.group_values(kind, idx, n_cat - 1)
        return curves(kind, theta, a, d, c, ak=ak, derivatives=derivatives)

    def log_probs(self, theta: object) -> FloatArray:
        """log P(X_j = k | θ), shape (T, J, max K); −inf beyond an item's categories."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        out = np.full((th.size, self.n_items, int(self.n_categories.max())), -np.inf)
        for kind, k, idx in self.groups():
            out[:, idx, :k] = self.group_curves(th, kind, k, idx).log_p
        return out

    def log_probs_at(self, theta: object, items: object) -> FloatArray:
        """log P(X = k | θ_n) of item ``items[n]`` at ``theta[n]`` (pairs, not a grid),
        shape (N, max K); −inf beyond an item's categories.

        Every model here depends on θ only through aθ, so a pair's curve is its item's
        curve at θ = 1 with the slope a·θ_n: N pairs cost N item evaluations, not N²."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        if th.shape != pos.shape:
            raise ParamsError(f"{th.size} abilities for {pos.size} items")
        n_cat = self.n_categories
        out = np.full((th.size, int(n_cat.max())), -np.inf)
        kinds = np.array([t.value for t in self.item_types])[pos]
        for kind in set(kinds.tolist()):
            for k in np.unique(n_cat[pos][kinds == kind]):
                pairs = np.flatnonzero((kinds == kind) & (n_cat[pos] == k))
                kind_k = ItemType(kind)
                a, d, c, ak = self.group_values(kind_k, pos[pairs], int(k) - 1)
                cv = curves(kind_k, [1.0], a * th[pairs], d, c, ak=ak)
                out[pairs, :k] = cv.log_p[0]
        return out

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information I_j(θ) = Σ_k P_k (∂ log P_k/∂θ)², shape (T, J)."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        out = np.empty((th.size, self.n_items))
        for kind, k, idx in self.groups():
            cv = self.group_curves(th, kind, k, idx, derivatives=True)
            out[:, idx] = information_of(cv, self.a[idx])
        return out

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """A score per (θ_n, item_n) pair, drawn from the item's categories, (N,)."""
        return draw_categories(np.exp(self.log_probs_at(theta, items)), rng)

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """``irt.fit.persons.lz_scored`` of the scores to the items at ``items``."""
        scores = np.asarray(responses, dtype=np.float64)
        return lz_scored(scores, one_theta(theta), self.subset(items))

    def subset(self, items: object) -> PolytomousParams:
        """The items selected by ids (a sequence of str) or a numpy index (mask or
        positions), in that order; the NaN padding is trimmed to the widest item kept."""
        idx = item_positions(self.item_ids, items)
        width = int(self.n_categories[idx].max()) - 1 if idx.size else 1

        def pick(values: FloatArray | None, two_d: bool = False) -> FloatArray | None:
            if values is None:
                return None
            return values[idx, :width] if two_d else values[idx]

        return PolytomousParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
            item_types=tuple(self.item_types[k] for k in idx),
            a=self.a[idx],
            d=self.d[idx, :width],
            c=self.c[idx],
            se_a=pick(self.se_a),
            se_d=pick(self.se_d, two_d=True),
            se_c=pick(self.se_c),
            ak=pick(self.ak, two_d=True),
            se_ak=pick(self.se_ak, two_d=True),
        )


def fill_scoring_values(types: Sequence[str], d: FloatArray, given: FloatArray) -> FloatArray:
    """(J, max m) scoring values: the rows of ``given`` (ragged, NaN-padded), and the
    fixed ak_1..ak_m of gpcm items whose row is empty."""
    ak = np.full(d.shape, np.nan)
    for j, t in enumerate(types):
        family = family_of(t)
        m = int(np.count_nonzero(~np.isnan(d[j])))
        row = given[j] if j < given.shape[0] else np.full(0, np.nan)
        fixed = family.scoring_values(np.zeros((1, 0)), m)
        if fixed is not None and not family.free_scores(m) and np.isnan(row).all():
            ak[j, :m] = fixed[0]
        else:
            width = min(d.shape[1], row.size)
            ak[j, :width] = row[:width]
    return ak


def check_item_values(family: ItemFamily, item: str, d: FloatArray, ak: FloatArray) -> None:
    """Raise unless the threshold row ``d`` (d_1..d_m, then NaN) and the scoring-value
    row ``ak`` fit an item of ``family``."""
    m = int(np.count_nonzero(~np.isnan(d)))
    if m == 0:
        raise ParamsError(f"item {item!r}: no threshold (d1 is empty)")
    if np.isnan(d[:m]).any():
        gap = int(np.flatnonzero(np.isnan(d[:m]))[0]) + 1
        raise ParamsError(
            f"item {item!r}: threshold d{gap} is empty but a later one is not "
            "(an item's thresholds are d1..dm, then empty cells)"
        )
    if not np.all(np.isfinite(d[:m])):
        raise ParamsError(f"item {item!r} has non-finite parameters")
    if family.binary and m != 1:
        raise ParamsError(f"item {item!r} is {family.name} but has {m} thresholds (needs 1)")
    if family.ordered_thresholds and np.any(np.diff(d[:m]) >= 0):
        raise ParamsError(
            f"item {item!r}: graded thresholds must decrease strictly (d_1 > … > d_m), "
            f"got {np.round(d[:m], 4).tolist()}"
        )
    check_scoring_values(family, item, ak, m)


def check_scoring_values(family: ItemFamily, item: str, row: FloatArray, m: int) -> None:
    """Raise unless ``row`` holds ak_1..ak_m of an item of ``family`` with m thresholds,
    then NaN, with the family's fixed values where it fixes them (all NaN when the family
    has no scoring values)."""
    if not family.has_scores:
        if not np.isnan(row).all():
            raise ParamsError(f"item {item!r} is {family.name}; only gpcm/nominal have ak")
        return
    if np.isnan(row[:m]).any() or not np.isnan(row[m:]).all() or not np.isfinite(row[:m]).all():
        raise ParamsError(f"item {item!r}: ak must hold ak1..ak{m}, then empty cells")
    free = family.free_scores(m)
    expected = family.scoring_values(row[None, :free], m)
    assert expected is not None
    if not np.allclose(row[:m], expected[0]):
        fixed = ", ".join(f"ak{k + 1} = {expected[0, k]:g}" for k in range(free, m))
        raise ParamsError(f"item {item!r}: mirt fixes the {family.name} scoring values {fixed}")
