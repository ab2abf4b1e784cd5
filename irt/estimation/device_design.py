"""The 0/1 response matrix on a torch device: int8 codes held once there, turned into
float blocks of subjects on demand (the device twin of ``irt.design_blocks``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from irt.design_blocks import DesignBlock, DesignMatrices, rows_per_block
from irt.response_table import MISSING, row_blocks


@dataclass(frozen=True)
class DeviceDesign:
    """The codes (1 right, 0 wrong, ``MISSING``) on a device, read in blocks of
    ``block_rows`` subjects; ``complete`` when no answer is missing."""

    codes: Any  # torch.Tensor of int8, (N, J)
    complete: bool
    block_rows: int

    @classmethod
    def of(cls, design: DesignMatrices, device: str, block_bytes: int) -> DeviceDesign:
        """``design``'s codes copied to ``device`` (one byte a cell)."""
        codes = torch.from_numpy(design.codes).to(device)
        return cls(codes, design.complete, rows_per_block(design.n_items, block_bytes))

    @property
    def n_subjects(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[1])

    def blocks(self) -> Iterator[DesignBlock]:
        """Every block of rows in order, as float64 tensors."""
        for rows in row_blocks(self.n_subjects, self.block_rows):
            codes = self.codes[rows]
            if self.complete:  # the codes are the 0/1 answers themselves
                yield DesignBlock(rows, codes.to(torch.float64), None)
                continue
            right = (codes == 1).to(torch.float64)
            yield DesignBlock(rows, right, (codes != MISSING).to(torch.float64))
