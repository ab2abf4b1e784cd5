"""The checks every pool of scored items (``irt.polytomous``, ``irt.continuous``) makes
of its items the same way: unique ids, one known type each, one value per item."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar, cast

import numpy as np

from irt.errors import ParamsError
from irt.types import FloatArray

_Kind = TypeVar("_Kind", bound=StrEnum)


def case_blind_member(
    kinds: type[_Kind], value: object, aliases: Mapping[str, str] | None = None
) -> _Kind | None:
    """The member of ``kinds`` whose value is ``value`` in any case ("2pl" for "2PL"),
    or is what ``value`` is an alias of (lower case: "grm" for "graded"); None if none.
    What an item-type enum's ``_missing_`` returns."""
    if not isinstance(value, str):
        return None
    low = value.lower()
    low = (aliases or {}).get(low, low)
    return next((member for member in kinds if member.value.lower() == low), None)


def item_vector(name: str, values: object, n: int) -> FloatArray:
    """``values`` as a float vector of one value per item, (n,)."""
    arr = np.array(values, dtype=np.float64, ndmin=1)
    if arr.shape != (n,):
        raise ParamsError(f"item parameter {name!r} has shape {arr.shape}, expected ({n},)")
    return arr


def item_type(kinds: type[_Kind], value: object, item: str) -> _Kind:
    """``value`` as one of ``kinds``, or one line naming the item and the known types."""
    try:
        return kinds(cast(Any, value))
    except ValueError:
        names = ", ".join(t.value for t in kinds)
        raise ParamsError(
            f"unknown item type {value!r} for item {item!r}; use one of {names}"
        ) from None


def checked_item_types(
    kinds: type[_Kind], item_ids: Sequence[str], item_types: Sequence[object]
) -> tuple[_Kind, ...]:
    """The items' types as ``kinds`` after checking that the ids are unique and that
    there is one type per item."""
    n = len(item_ids)
    if len(set(item_ids)) != n:
        raise ParamsError("item ids are not unique")
    if len(item_types) != n:
        raise ParamsError(f"{len(item_types)} item types for {n} items")
    return tuple(item_type(kinds, t, i) for t, i in zip(item_types, item_ids, strict=True))
