"""What goes into and comes out of the multidimensional polytomous fits
(``irt.mirt_polytomous_em``): each item's type, the loading pattern checked against the
items, start values, and the pool built from each group's fitted parameters."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from irt.errors import IRTError
from irt.item_checks import item_type
from irt.mirt_polytomous import CategoryLayout, MirtPolytomousParams, MultiItemType
from irt.mirt_polytomous_estep import Naturals
from irt.polytomous_responses import PolytomousResponses
from irt.types import BoolArray, FloatArray, IntArray

ItemTypes = Sequence[MultiItemType | str] | MultiItemType | str | None


def resolve_types(item_types: ItemTypes, responses: PolytomousResponses) -> list[MultiItemType]:
    """One type per item: given for all, per item, or mirt's default (2PL / graded)."""
    n_cat = responses.n_categories
    if item_types is None:
        return [MultiItemType.default_for(k) for k in n_cat]
    ids = responses.item_ids
    raw = [item_types] * len(n_cat) if isinstance(item_types, str) else list(item_types)
    if len(raw) != len(n_cat):
        raise IRTError(f"{len(raw)} item types for {len(n_cat)} items")
    types = [item_type(MultiItemType, t, item) for t, item in zip(raw, ids, strict=True)]
    for item, t, k in zip(responses.item_ids, types, n_cat, strict=True):
        if t.binary and k != 2:
            raise IRTError(f"item {item!r} is 2PL but has {k} categories")
        if k < t.family.min_categories:
            raise IRTError(
                f"item {item!r} is {t.value} but has {k} categories "
                f"(needs {t.family.min_categories}+)"
            )
    return types


def start_naturals(
    layout: CategoryLayout, responses: PolytomousResponses, pattern: BoolArray
) -> list[Naturals]:
    """Slopes 1 on the pattern; thresholds from the observed category shares (graded and
    2PL: logit P(X ≥ k); gpcm and nominal: log P(X = k)/P(X = 0)); ak = 1..m."""
    values = responses.values
    out: list[Naturals] = []
    for g in layout.groups:
        shares = np.empty((g.items.size, g.n_cat))
        for row, j in enumerate(g.items):
            col = values[:, j]
            seen = np.bincount(col[col >= 0], minlength=g.n_cat)[: g.n_cat].astype(float)
            shares[row] = (seen + 0.5) / (seen.sum() + 0.5 * g.n_cat)
        if g.kind.scored:
            d = np.log(shares[:, 1:] / shares[:, :1])
            ak = np.tile(np.arange(1.0, g.n_cat), (g.items.size, 1))
        else:
            above = np.cumsum(shares[:, ::-1], axis=1)[:, ::-1][:, 1:]
            d = np.log(above / (1.0 - above))
            ak = None
        out.append((np.where(pattern[g.items], 1.0, 0.0), 1.3 * d, ak))
    return out


def params_from(
    responses: PolytomousResponses,
    types: list[MultiItemType],
    layout: CategoryLayout,
    naturals: Sequence[Naturals],
    pattern: BoolArray,
    factors: tuple[str, ...],
    correlation: FloatArray,
    place: Callable[[IntArray, FloatArray], FloatArray] | None = None,
) -> MirtPolytomousParams:
    """The pool from each group's naturals; ``place`` maps a group's local slopes to
    rows of the global slope matrix (the identity on a full grid)."""
    n, width = responses.n_items, int(max(responses.n_categories)) - 1
    slopes = np.zeros(pattern.shape)
    d = np.full((n, width), np.nan)
    ak = np.full((n, width), np.nan)
    for g, (a, dd, kk) in zip(layout.groups, naturals, strict=True):
        slopes[g.items] = a if place is None else place(g.items, a)
        d[g.items, : g.m] = dd
        if kk is not None:
            ak[g.items, : g.m] = kk
    return MirtPolytomousParams(
        item_ids=tuple(responses.item_ids),
        item_types=tuple(types),
        slopes=np.where(pattern, slopes, 0.0),
        d=d,
        ak=ak,
        factors=factors,
        correlation=correlation,
        pattern=pattern,
    )


def checked_pattern(model: object, n_items: int) -> BoolArray:
    raw = np.asarray(model)
    if raw.ndim != 2 or raw.size == 0:
        raise IRTError(f"a loading pattern must be an items × factors matrix, got {raw.shape}")
    if raw.dtype != bool and not np.all((raw == 0) | (raw == 1)):
        raise IRTError("a loading pattern must hold booleans (or 0/1)")
    if raw.shape[0] != n_items:
        raise IRTError(f"the loading pattern has {raw.shape[0]} rows for {n_items} items")
    pattern = raw.astype(bool)
    if np.any(pattern.sum(axis=0) < 2):
        raise IRTError("each factor needs at least 2 items in the loading pattern")
    return pattern
