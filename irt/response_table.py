"""What every response matrix shares, whatever its answers hold (0/1, scores 0..m,
continuous credit): one row per subject and one column per item, named by ids, and
the selection of rows and columns."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Self, cast

import numpy as np

from irt.errors import ResponseDataError
from irt.types import BoolArray, FloatArray

#: Stored code for an item a subject did not answer, in a table of integer codes.
MISSING = -1


def float_table(
    data: object, subject_ids: Sequence[str] | None, item_ids: Sequence[str] | None
) -> tuple[FloatArray, tuple[str, ...], tuple[str, ...]]:
    """``data`` as a 2-D float array, with the ids given or ``default_ids``: what every
    ``from_array`` reads before checking its own kind of answers."""
    try:
        arr = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise ResponseDataError("scores must be a 2-D array of numbers") from None
    if arr.ndim != 2:
        raise ResponseDataError(f"a response matrix must be 2-D, got shape {arr.shape}")
    subjects, items = default_ids(arr.shape, subject_ids, item_ids)
    return arr, subjects, items


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
    def observed(self) -> BoolArray:
        """True where an answer is present, (N, J): each kind of table says how."""
        raise NotImplementedError

    def _check_answered(self) -> None:
        """A table without a single answer is refused (the last check of each
        ``__post_init__``, when ``values`` is stored)."""
        if not self._any_answer():
            raise ResponseDataError("the response matrix has no answers at all")

    def _any_answer(self) -> bool:
        return bool(self.observed.any())

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


class CodedResponses(ResponseTable):
    """A table of integer codes (0/1 in ``ResponseMatrix``, scores 0..m_j in
    ``PolytomousResponses``) with ``MISSING`` where a subject did not answer."""

    @property
    def observed(self) -> BoolArray:
        """True where an answer is present."""
        return np.asarray(self.values != MISSING)

    @property
    def is_complete(self) -> bool:
        # Every stored code is MISSING or an answer 0 or above: the extremes say it
        # without a mask of the whole table.
        return bool(self.values.min() > MISSING)

    def _any_answer(self) -> bool:
        return bool(self.values.max() > MISSING)

    def as_float(self) -> FloatArray:
        """Float copy with NaN for missing answers (the convention of ``irt.models``)."""
        out = self.values.astype(np.float64)
        out[~self.observed] = np.nan
        return out


def row_blocks(n_rows: int, block_rows: int) -> Iterator[slice]:
    """``slice``s of at most ``block_rows`` rows covering ``n_rows`` in order: how a
    large table is worked through without a full-size temporary."""
    for lo in range(0, n_rows, block_rows):
        yield slice(lo, min(lo + block_rows, n_rows))
