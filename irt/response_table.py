"""What every response matrix shares, whatever its answers hold (0/1, scores 0..m,
continuous credit): one row per subject and one column per item, named by ids, and
the selection of rows and columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar, Self, cast

import numpy as np


def default_ids(
    shape: tuple[int, ...],
    subject_ids: Sequence[str] | None,
    item_ids: Sequence[str] | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ids given, or s0000.. for the rows and i0000.. for the columns of ``shape``."""
    n, j = shape
    subjects = (
        tuple(subject_ids) if subject_ids is not None else tuple(f"s{k:04d}" for k in range(n))
    )
    items = tuple(item_ids) if item_ids is not None else tuple(f"i{k:04d}" for k in range(j))
    return subjects, items


class ResponseTable:
    """The shared part of ``ResponseMatrix``, ``PolytomousResponses`` and
    ``ContinuousResponses`` (each a frozen dataclass with these three fields)."""

    subject_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    values: np.ndarray

    @property
    def n_subjects(self) -> int:
        return len(self.subject_ids)

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    def subset(self, subjects: object = None, items: object = None) -> Self:
        """Rows and columns selected by numpy indices (masks or positions); per-item
        facts (``_per_item``) follow their columns."""
        rows = np.arange(self.n_subjects)
        cols = np.arange(self.n_items)
        if subjects is not None:
            rows = rows[cast(Any, subjects)]
        if items is not None:
            cols = cols[cast(Any, items)]
        per_item = {name: tuple(getattr(self, name)[c] for c in cols) for name in self._per_item}
        out: Self = replace(
            cast(Any, self),
            subject_ids=tuple(self.subject_ids[r] for r in rows),
            item_ids=tuple(self.item_ids[c] for c in cols),
            values=self.values[np.ix_(rows, cols)],
            **per_item,
        )
        return out

    #: Fields holding one entry per item, in column order.
    _per_item: ClassVar[tuple[str, ...]] = ()
