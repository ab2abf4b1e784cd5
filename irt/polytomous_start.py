"""What the polytomous EM settles before its first cycle: the model of every item, that
the data identify every item, and the starting values — from classical item statistics
or from given parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from irt.errors import IRTError, ResponseDataError
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_layout import Layout, Natural, naturals_of
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses

__all__ = [
    "ItemTypes",
    "check_identified",
    "classical_start",
    "resolve_item_types",
    "start_from",
]

#: What ``PolytomousCalibrator`` accepts as ``item_types``: one type for all items, one
#: per item, or a mapping from item id to type for some of them; None for mirt's default.
ItemTypes = ItemType | str | Sequence[ItemType | str] | Mapping[str, ItemType | str] | None


def resolve_item_types(item_types: ItemTypes, responses: PolytomousResponses) -> list[ItemType]:
    """One ``ItemType`` per item of ``responses`` from the calibrator's ``item_types``."""
    n_cat = responses.n_categories
    ids = responses.item_ids
    if item_types is None:
        raw: list[object] = [ItemType.default_for(k) for k in n_cat]
    elif isinstance(item_types, str | ItemType):
        raw = [item_types] * len(ids)
    elif isinstance(item_types, Mapping):
        unknown = [k for k in item_types if k not in set(ids)]
        if unknown:
            raise IRTError(f"item_types names item {unknown[0]!r}, which is not in the responses")
        raw = [
            item_types.get(item, ItemType.default_for(k))
            for item, k in zip(ids, n_cat, strict=True)
        ]
    else:
        raw = list(item_types)
        if len(raw) != len(ids):
            raise IRTError(f"item_types has {len(raw)} entries for {len(ids)} items")
    out = []
    for value, item, k in zip(raw, ids, n_cat, strict=True):
        try:
            kind = ItemType(cast(Any, value))
        except ValueError:
            names = ", ".join(t.value for t in ItemType)
            raise IRTError(
                f"unknown item type {value!r} for item {item!r}; use one of {names}"
            ) from None
        if kind.binary and k != 2:
            raise IRTError(
                f"item {item!r} has {k} score categories; a {kind.value} item needs exactly 2"
            )
        if k < kind.family.min_categories:
            raise IRTError(
                f"item {item!r} has {k} score categories; a {kind.value} item needs "
                f"{kind.family.min_categories} or more"
            )
        out.append(kind)
    return out


def check_identified(
    responses: PolytomousResponses,
    types: Sequence[ItemType],
    priors: PolytomousPriors | None = None,
) -> None:
    """Raise unless every item has answers in each of its score categories: an item
    with one observed score, or an empty category between, is not identified by its
    likelihood. Priors on both the slope and the thresholds (``identifying``) identify
    it: then only an item nobody answered is refused."""
    counts = responses.category_counts()
    for j, item in enumerate(responses.item_ids):
        k = responses.n_categories[j]
        seen = np.flatnonzero(counts[j, :k])
        n = int(counts[j].sum())
        if n == 0:
            raise ResponseDataError(f"item {item!r} has no answers; drop it before the fit")
        if priors is not None and priors.identifying:
            continue
        if seen.size == 1:
            raise ResponseDataError(
                f"item {item!r} has a single observed score ({int(seen[0])}) among its {n} "
                "answers; its parameters are not identified — drop it"
            )
        if seen.size < k:
            empty = int(np.setdiff1d(np.arange(k), seen)[0])
            raise ResponseDataError(
                f"item {item!r} ({types[j].value}, scores 0..{k - 1}) has no answer scoring "
                f"{empty}; renumber its observed scores (PolytomousResponses.collapsed()) "
                "or declare fewer categories"
            )


def classical_start(
    responses: PolytomousResponses, layout: Layout, priors: PolytomousPriors
) -> list[Natural]:
    """(a, d, c, ak) per group from classical statistics.

    A subject's standing is its mean share of the maximum score over the other items it
    answered; the item–rest correlation r gives a ≈ 1.702 r/√(1 − r²) (the normal-ogive
    slope in logistic units). Thresholds are the item family's
    (``ItemFamily.start_values``: logits of the cumulative proportions for the graded
    model, of the continuation ratios for the sequential, of each category against 0
    for the gpcm and nominal), stretched by √(1 + (a/1.702)²) because a N(0, 1) spread
    of θ flattens the marginal proportions towards 1/2.
    """
    values = responses.values.astype(np.float64)
    observed = responses.observed
    share = np.where(observed, values / responses.max_scores[None, :], 0.0)
    total, answered = share.sum(axis=1), observed.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = (total[:, None] - share) / (answered[:, None] - 1)
    usable = observed & (answered[:, None] > 1)
    a = np.empty(responses.n_items)
    for j in range(responses.n_items):
        x, y = values[usable[:, j], j], rest[usable[:, j], j]
        r = 0.3
        if x.size > 2 and x.std() > 0 and y.std() > 0:
            r = float(np.corrcoef(x, y)[0, 1])
        r = float(np.clip(r, 0.1, 0.9))
        a[j] = np.clip(1.702 * r / np.sqrt(1 - r**2), 0.2, 4.0)
    stretch = np.sqrt(1 + (a / 1.702) ** 2)
    counts = responses.category_counts().astype(np.float64)
    guess = 0.1
    if priors.c_alpha is not None and priors.c_alpha + cast(float, priors.c_beta) > 2:
        guess = (priors.c_alpha - 1) / (priors.c_alpha + cast(float, priors.c_beta) - 2)
    out: list[Natural] = []
    for g in layout.groups:
        idx = g.items
        start = g.kind.family.start_values(counts[idx, : g.n_cat] + 0.5, stretch[idx], guess)
        out.append((a[idx], start.d, start.c, start.ak))
    return out


def start_from(
    start: PolytomousParams, responses: PolytomousResponses, layout: Layout
) -> list[Natural]:
    """(a, d, c) per group from given parameters, which must have the fit's items, types
    and numbers of categories."""
    if start.item_ids != responses.item_ids:
        raise IRTError("starting values must cover the same items in the same order")
    for g in layout.groups:
        for j in g.items:
            if start.item_types[j] is not g.kind or start.n_categories[j] != g.n_cat:
                raise IRTError(
                    f"starting values for item {start.item_ids[j]!r} are "
                    f"{start.item_types[j].value} with {start.n_categories[j]} categories, "
                    f"the fit has {g.kind.value} with {g.n_cat}"
                )
    return naturals_of(start, layout)
