"""The 0/1 response matrix as the binary fit reads it: int8 codes held once, turned into
float blocks of subjects on demand.

A float copy of the whole matrix costs 8 bytes a cell for the right answers and 8 more
for the answered mask: 16 GB at 10,000 × 100,000, on top of the 1 GB of codes. Every
sum the fit takes over subjects (expected counts, item information, start values, the
marginal likelihood) is a sum over rows, so it can be taken one block of rows at a time
with at most ``BLOCK_BYTES`` of floats per matrix alive; a matrix that fits in one
block is computed exactly as a whole one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from irt.estimation.arrays import as_float64, ones
from irt.response_table import MISSING, row_blocks
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

#: Bytes of one float block (of ``right`` or of ``observed``). Large enough that the
#: matrix products run at full speed (a block holds ≥ 80 rows at 100,000 items), small
#: enough that a few of them are nothing beside the codes.
BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class DesignBlock:
    """Rows ``rows`` of the response matrix as floats: ``right`` is 1 where an answer is
    right (0 where wrong or missing), ``observed`` 1 where an answer is present, or
    ``None`` when the whole matrix is complete (the sums it would enter are then the
    same for every subject)."""

    rows: slice
    right: FloatArray
    observed: FloatArray | None

    def observed_or_ones(self) -> FloatArray:
        """``observed``, with ones where the matrix is complete."""
        return ones(self.right.shape, like=self.right) if self.observed is None else self.observed

    def wrong(self, index: IntArray | None = None) -> FloatArray:
        """1 where an answer is wrong, 0 where right or missing; for the rows ``index``
        of the block only, where given."""
        right = self.right if index is None else self.right[index]
        if self.observed is None:
            return 1.0 - right
        return (self.observed if index is None else self.observed[index]) - right


@dataclass(frozen=True)
class DesignMatrices:
    """The codes (1 right, 0 wrong, ``MISSING``) of N subjects × J items, read in blocks
    of ``block_rows`` subjects; ``complete`` when no answer is missing."""

    codes: npt.NDArray[np.int8]
    complete: bool
    block_rows: int

    @classmethod
    def from_responses(
        cls, responses: ResponseMatrix, block_bytes: int | None = None
    ) -> DesignMatrices:
        """``responses`` in blocks of at most ``block_bytes`` (``BLOCK_BYTES`` unless
        given) of floats."""
        codes = responses.values
        rows = rows_per_block(codes.shape[1], block_bytes or BLOCK_BYTES)
        return cls(codes, responses.is_complete, rows)

    @property
    def n_subjects(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[1])

    def block(self, rows: slice) -> DesignBlock:
        """Rows ``rows`` as a block of new arrays."""
        codes = self.codes[rows]
        if self.complete:  # the codes are the 0/1 answers themselves
            return DesignBlock(rows, as_float64(codes), None)
        return DesignBlock(rows, as_float64(codes == 1), as_float64(codes != MISSING))

    def blocks(self) -> Iterator[DesignBlock]:
        """Every block of rows in order. The blocks share two buffers, so a block is
        only valid until the next one is drawn (copy what must outlive it): allocating
        fresh arrays each time would fault in their pages again on every E-step."""
        if self.n_subjects <= self.block_rows:
            yield self.block(slice(0, self.n_subjects))
            return
        shape = (self.block_rows, self.n_items)
        right = np.empty(shape)
        if self.complete:  # the codes are the 0/1 answers themselves
            for rows in row_blocks(self.n_subjects, self.block_rows):
                codes = self.codes[rows]
                np.copyto(right[: len(codes)], codes)
                yield DesignBlock(rows, right[: len(codes)], None)
            return
        is_right = np.empty(shape, dtype=bool)
        observed = np.empty(shape)
        for rows in row_blocks(self.n_subjects, self.block_rows):
            codes = self.codes[rows]
            m = len(codes)
            np.equal(codes, 1, out=is_right[:m])
            np.copyto(right[:m], is_right[:m])
            np.not_equal(codes, MISSING, out=is_right[:m])
            np.copyto(observed[:m], is_right[:m])
            yield DesignBlock(rows, right[:m], observed[:m])


def rows_per_block(n_items: int, block_bytes: int) -> int:
    """How many subjects' rows of ``n_items`` floats fit in ``block_bytes`` (at least 1)."""
    return max(1, block_bytes // (8 * max(n_items, 1)))
