"""What the adaptive test has seen so far, for a batch of examinees at once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from irt.models import ItemParams
from irt.types import FloatArray


@dataclass(frozen=True)
class Answers:
    """The items given to E examinees and their answers, padded to L columns.

    ``a``, ``b``, ``c``, ``d`` are the given items' parameters and ``right`` the answers
    (1/0), all shape (E, L); ``given`` marks the columns that hold an answer (an
    examinee who has answered k items has its first k columns set).
    """

    a: FloatArray
    b: FloatArray
    c: FloatArray
    d: FloatArray
    right: FloatArray
    given: FloatArray  # 1.0 where a column holds an answer

    @classmethod
    def gather(
        cls,
        params: ItemParams,
        items: npt.NDArray[np.int_],
        right: FloatArray,
    ) -> Answers:
        """From item positions (E, L; −1 = none yet) and answers (E, L)."""
        given = items >= 0
        idx = np.where(given, items, 0)
        mask = given.astype(np.float64)
        return cls(
            a=params.a[idx] * mask,
            b=params.b[idx],
            c=params.c[idx],
            d=np.where(given, params.d[idx], 1.0),
            right=np.where(given, right, 0.0),
            given=mask,
        )

    def rows(self, keep: npt.NDArray[np.bool_] | npt.NDArray[np.int_]) -> Answers:
        """The examinees selected by a boolean mask or by positions."""
        return Answers(
            a=self.a[keep],
            b=self.b[keep],
            c=self.c[keep],
            d=self.d[keep],
            right=self.right[keep],
            given=self.given[keep],
        )

    @property
    def n_given(self) -> FloatArray:
        return np.asarray(self.given.sum(axis=1), dtype=np.float64)

    def all_agree(self) -> npt.NDArray[np.bool_]:
        """True where an examinee's answers are all right or all wrong (or none)."""
        n_right = (self.right * self.given).sum(axis=1)
        return np.asarray((n_right == 0) | (n_right == self.n_given))
