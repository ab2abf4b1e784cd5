"""The response matrix: subjects x items, 0/1, missing allowed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from irt.errors import ResponseDataError
from irt.response_table import MISSING, CodedResponses, float_table, row_blocks
from irt.types import FloatArray, IntArray

__all__ = ["MISSING", "AnswerCounts", "ResponseMatrix", "check_layout"]


#: Cells counted at a time by ``ResponseMatrix.answer_counts``.
_COUNT_BLOCK_CELLS = 2**25


@dataclass(frozen=True)
class AnswerCounts:
    """Right and wrong answers per item (J,) and per subject (N,); the rest are missing."""

    item_right: IntArray
    item_wrong: IntArray
    subject_right: IntArray
    subject_wrong: IntArray

    @property
    def n_answers(self) -> int:
        return int(self.item_right.sum() + self.item_wrong.sum())


@dataclass(frozen=True)
class ResponseMatrix(CodedResponses):
    """Graded answers of N subjects to J items.

    ``values`` is an int8 array of shape (N, J) holding 1 (right), 0 (wrong) or
    ``MISSING`` (-1, not answered).
    """

    subject_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    values: npt.NDArray[np.int8]

    def __post_init__(self) -> None:
        values = np.asarray(self.values)
        check_layout(values, self.subject_ids, self.item_ids)
        # Integers within [MISSING, 1] are 0, 1 or MISSING: the bounds say it without a
        # mask of the whole matrix, which is only built to name a culprit.
        in_range = (
            np.issubdtype(values.dtype, np.integer)
            and values.min() >= MISSING
            and values.max() <= 1
        )
        bad = None if in_range else ~np.isin(values, (0, 1, MISSING))
        if bad is not None and bad.any():
            i, j = np.argwhere(bad)[0]
            raise ResponseDataError(
                f"response of subject {self.subject_ids[i]!r} to item {self.item_ids[j]!r} "
                f"is {values[i, j]!r}; only 0, 1 or missing are allowed"
            )
        object.__setattr__(self, "values", values.astype(np.int8, copy=False))
        self._check_answered()

    @classmethod
    def from_array(
        cls,
        data: object,
        subject_ids: list[str] | tuple[str, ...] | None = None,
        item_ids: list[str] | tuple[str, ...] | None = None,
    ) -> ResponseMatrix:
        """From a float array with NaN (or a negative code) for missing answers."""
        arr, subjects, items = float_table(data, subject_ids, item_ids)
        missing = ~np.isfinite(arr) | (arr < 0)
        values = np.where(missing, MISSING, arr)
        if not np.all((values == 0) | (values == 1) | (values == MISSING)):
            raise ResponseDataError("responses must be 0, 1 or missing")
        return cls(subject_ids=subjects, item_ids=items, values=values.astype(np.int8))

    def accuracy(self) -> FloatArray:
        """Each subject's share of right answers among the items it answered (NaN if none)."""
        counts = self.answer_counts()
        n = counts.subject_right + counts.subject_wrong
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, counts.subject_right / np.maximum(n, 1), np.nan)

    def answer_counts(self) -> AnswerCounts:
        """Right and wrong answers per item and per subject, counted a block of rows at a
        time (no mask of the whole matrix)."""
        n, j = self.values.shape
        item_right, item_wrong = np.zeros(j, dtype=np.int64), np.zeros(j, dtype=np.int64)
        subject_right, subject_wrong = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        for rows in row_blocks(n, max(1, _COUNT_BLOCK_CELLS // max(j, 1))):
            codes = self.values[rows]
            right, wrong = codes == 1, codes == 0
            item_right += right.sum(axis=0)
            item_wrong += wrong.sum(axis=0)
            subject_right[rows] = right.sum(axis=1)
            subject_wrong[rows] = wrong.sum(axis=1)
        return AnswerCounts(item_right, item_wrong, subject_right, subject_wrong)

    def on_items(self, item_ids: tuple[str, ...]) -> ResponseMatrix:
        """The same subjects on ``item_ids`` in that order: columns of items this matrix
        lacks are missing, its items not listed are dropped."""
        own = {item: j for j, item in enumerate(self.item_ids)}
        values = np.full((self.n_subjects, len(item_ids)), MISSING, dtype=np.int8)
        pairs = [(k, own[item]) for k, item in enumerate(item_ids) if item in own]
        if pairs:
            to, frm = (list(x) for x in zip(*pairs, strict=True))
            values[:, to] = self.values[:, frm]
        return ResponseMatrix(subject_ids=self.subject_ids, item_ids=tuple(item_ids), values=values)


def check_layout(
    values: np.ndarray, subject_ids: tuple[str, ...], item_ids: tuple[str, ...]
) -> None:
    """A response matrix's shape and ids: 2-D, one row per subject and one column per
    item, not empty, no id twice (shared by the binary and the scored matrices)."""
    if values.ndim != 2:
        raise ResponseDataError(f"response matrix must be 2-D, got shape {values.shape}")
    if values.shape != (len(subject_ids), len(item_ids)):
        raise ResponseDataError(
            f"response matrix shape {values.shape} does not match "
            f"{len(subject_ids)} subjects x {len(item_ids)} items"
        )
    if values.size == 0:
        raise ResponseDataError("the response matrix is empty")
    _check_unique("subject", subject_ids)
    _check_unique("item", item_ids)


def _check_unique(kind: str, ids: tuple[str, ...]) -> None:
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for x in ids:
            if x in seen:
                raise ResponseDataError(f"duplicated {kind} id {x!r}")
            seen.add(x)
