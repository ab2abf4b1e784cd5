"""How a pool of items of mixed types splits into groups of like items — one item type,
one number of categories — the unit every vectorised computation of the polytomous
models works on, and where each item's (item, score) pairs sit among the columns of
the 0/1 pattern indicators of the EM.

Shared by the pools on one θ (``irt.polytomous``, ``irt.polytomous_layout``) and on
factors (``irt.mirt_polytomous``), which differ only in what else a group carries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, Self, TypeVar

import numpy as np

from irt.types import IntArray

__all__ = ["GroupLayout", "ItemGroup", "column_groups", "like_groups"]

Kind = TypeVar("Kind", bound=StrEnum)
Group = TypeVar("Group")


@dataclass(frozen=True)
class ItemGroup(Generic[Kind]):
    """Items of one type with ``n_cat`` categories: their positions in the pool and the
    columns (J_g, K) of their (item, score) pairs in the pattern indicators."""

    kind: Kind
    n_cat: int
    items: IntArray
    cols: IntArray

    @property
    def m(self) -> int:
        """Thresholds per item: the highest score."""
        return self.n_cat - 1


def like_groups(
    item_types: Sequence[Kind], n_categories: Sequence[int] | IntArray
) -> Iterator[tuple[Kind, int, IntArray]]:
    """(type, number of categories, item positions) of each group of like items, in the
    order of (type name, number of categories)."""
    n_cat = np.asarray(n_categories, dtype=np.int_)
    kinds = np.array([t.value for t in item_types])
    for value, k in sorted({(t.value, int(k)) for t, k in zip(item_types, n_cat, strict=True)}):
        idx = np.flatnonzero((kinds == value) & (n_cat == k))
        yield item_types[int(idx[0])], k, idx


def column_groups(
    item_types: Sequence[Kind],
    n_categories: Sequence[int] | IntArray,
    group: Callable[[Kind, int, IntArray, IntArray], Group],
) -> tuple[tuple[Group, ...], IntArray, int]:
    """The groups of ``like_groups``, each made by ``group(kind, n_cat, items, cols)``;
    each item's first column; and the number of columns, one per (item, score) pair."""
    n_cat = np.asarray(n_categories, dtype=np.int_)
    offsets = np.concatenate([[0], np.cumsum(n_cat)[:-1]]).astype(np.int_)
    groups = tuple(
        group(kind, k, idx, offsets[idx, None] + np.arange(k)[None, :])
        for kind, k, idx in like_groups(item_types, n_cat)
    )
    return groups, offsets, int(n_cat.sum())


@dataclass(frozen=True)
class GroupLayout(Generic[Group]):
    """The groups of a pool in a fixed order (``like_groups``'), each item's first column
    among the (item, score) pairs, and how many pairs there are. A subclass names the
    class of its groups in ``group_type``."""

    group_type: ClassVar[Callable[..., Any]]

    groups: tuple[Group, ...]
    offsets: IntArray  # (J,) first column of each item
    n_columns: int

    @classmethod
    def of(cls, item_types: Sequence[Any], n_categories: Sequence[int] | IntArray) -> Self:
        """The layout of items of types ``item_types`` with ``n_categories``."""
        return cls(*column_groups(item_types, n_categories, cls.group_type))
