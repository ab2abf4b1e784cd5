"""A response matrix of ordered scores: subjects × items, item j scored 0..m_j.

The binary ``irt.responses.ResponseMatrix`` is the special case m_j = 1 for every item
(``PolytomousResponses.from_binary``). Each item keeps its own number of categories
m_j + 1, given or read off the data (its highest observed score + 1), so a score above
an item's range is caught here, naming the subject and the item, rather than turning
into a silent extra category in a fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from irt.errors import ResponseDataError
from irt.response_table import MISSING, CodedResponses, float_table
from irt.responses import ResponseMatrix, check_layout
from irt.types import IntArray

__all__ = ["MISSING", "PolytomousResponses"]

# int16 holds scores up to 32,767 — far beyond any rating scale — in a quarter of int64.
_STORE = np.int16


@dataclass(frozen=True)
class PolytomousResponses(CodedResponses):
    """Scores of N subjects on J items: ``values`` (N, J) int16 with 0..m_j, or
    ``MISSING`` (−1) where a subject did not answer.

    ``n_categories`` gives m_j + 1 per item; left empty it is read off the data as each
    item's highest observed score + 1 (at least 2, so an item nobody answered above 0 is
    still binary).
    """

    _per_item = ("n_categories",)

    subject_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    values: npt.NDArray[np.int16]
    n_categories: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        raw = np.asarray(self.values)
        check_layout(raw, self.subject_ids, self.item_ids)
        if not np.issubdtype(raw.dtype, np.integer):
            raise ResponseDataError(
                f"scores must be stored as integers, got dtype {raw.dtype} "
                "(PolytomousResponses.from_array converts floats with NaN for missing)"
            )
        n_items = raw.shape[1]
        if self.n_categories:
            n_cat = np.asarray(self.n_categories, dtype=np.int_)
            if n_cat.shape != (n_items,):
                raise ResponseDataError(
                    f"n_categories has {n_cat.size} entries for {n_items} items"
                )
            few = np.flatnonzero(n_cat < 2)
            if few.size:
                j = int(few[0])
                raise ResponseDataError(
                    f"item {self.item_ids[j]!r} has n_categories {int(n_cat[j])}; "
                    "an item needs at least 2 score categories"
                )
        else:
            n_cat = np.maximum(raw.max(axis=0).astype(np.int_) + 1, 2)
        bad = (raw < MISSING) | (raw >= n_cat[None, :])
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ResponseDataError(
                f"score of subject {self.subject_ids[i]!r} on item {self.item_ids[j]!r} is "
                f"{int(raw[i, j])}; item {self.item_ids[j]!r} takes scores "
                f"0..{int(n_cat[j]) - 1} (or {MISSING} for missing)"
            )
        if int(n_cat.max()) > np.iinfo(_STORE).max:
            raise ResponseDataError(f"an item with {int(n_cat.max())} categories is too many")
        object.__setattr__(self, "values", raw.astype(_STORE, copy=False))
        object.__setattr__(self, "n_categories", tuple(int(k) for k in n_cat))
        self._check_answered()

    @classmethod
    def from_array(
        cls,
        data: object,
        subject_ids: Sequence[str] | None = None,
        item_ids: Sequence[str] | None = None,
        n_categories: Sequence[int] | None = None,
    ) -> PolytomousResponses:
        """From a numeric array with NaN (or −1) for missing answers; other values must
        be whole numbers."""
        arr, subjects, items = float_table(data, subject_ids, item_ids)
        missing = np.isnan(arr)
        fractional = ~missing & (arr != np.round(arr))
        infinite = np.isinf(arr)
        bad = fractional | infinite
        if bad.any():
            r, k = np.argwhere(bad)[0]
            who = (
                f"subject {subjects[r]!r} on item {items[k]!r}"
                if (len(subjects), len(items)) == arr.shape
                else f"row {r}, column {k}"
            )
            raise ResponseDataError(
                f"score of {who} is {float(arr[r, k]):g}; scores must be whole numbers"
            )
        big = np.abs(np.where(missing, 0.0, arr)) > np.iinfo(_STORE).max
        if big.any():
            r, k = np.argwhere(big)[0]
            raise ResponseDataError(
                f"score {float(arr[r, k]):g} at row {r}, column {k} is out of range"
            )
        values = np.where(missing, MISSING, arr).astype(_STORE)
        return cls(
            subject_ids=subjects,
            item_ids=items,
            values=values,
            n_categories=tuple(n_categories) if n_categories is not None else (),
        )

    @classmethod
    def from_binary(cls, responses: ResponseMatrix) -> PolytomousResponses:
        """A 0/1 matrix as scores with two categories per item."""
        return cls(
            subject_ids=responses.subject_ids,
            item_ids=responses.item_ids,
            values=responses.values.astype(_STORE),
            n_categories=(2,) * responses.n_items,
        )

    @property
    def max_scores(self) -> IntArray:
        """m_j per item, (J,)."""
        return np.asarray(self.n_categories, dtype=np.int_) - 1

    @property
    def is_binary(self) -> bool:
        return all(k == 2 for k in self.n_categories)

    def category_counts(self) -> IntArray:
        """How many subjects gave each score: (J, max K), 0 beyond an item's range."""
        width = max(self.n_categories)
        out = np.zeros((self.n_items, width), dtype=np.int_)
        for k in range(width):
            out[:, k] = (self.values == k).sum(axis=0)
        return out

    def collapsed(self) -> PolytomousResponses:
        """Each item's observed scores renumbered 0..K_j − 1 in order, as R mirt does
        before a fit: scores 1..4 become 0..3, and a score nobody gave is closed up
        (0, 1, 3 → 0, 1, 2). An item with a single observed score keeps 2 categories."""
        values = self.values.copy()
        n_cat = []
        for j in range(self.n_items):
            col = self.values[:, j]
            seen = np.unique(col[col != MISSING])
            code = np.full(int(self.values[:, j].max()) + 2, MISSING, dtype=_STORE)
            code[seen] = np.arange(seen.size)
            values[:, j] = np.where(col == MISSING, MISSING, code[np.maximum(col, 0)])
            n_cat.append(max(int(seen.size), 2))
        return PolytomousResponses(self.subject_ids, self.item_ids, values, tuple(n_cat))
