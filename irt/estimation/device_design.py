"""The 0/1 response matrix on a torch device: int8 codes held once there, turned into
float blocks of subjects on demand (the device twin of ``irt.design_blocks``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from irt.design_blocks import DesignBlock, DesignMatrices, rows_per_block
from irt.response_table import row_blocks


@dataclass(frozen=True)
class DeviceDesign(DesignMatrices):
    """``DesignMatrices`` whose ``codes`` are an int8 tensor on a device, and whose
    blocks are float64 tensors there."""

    codes: Any  # torch.Tensor of int8, (N, J)

    @classmethod
    def of(cls, design: DesignMatrices, device: str, block_bytes: int) -> DeviceDesign:
        """``design``'s codes copied to ``device`` (one byte a cell)."""
        codes = torch.from_numpy(design.codes).to(device)
        return cls(codes, design.complete, rows_per_block(design.n_items, block_bytes))

    def blocks(self) -> Iterator[DesignBlock]:
        """Every block of rows in order (a GPU's allocator recycles their memory)."""
        for rows in row_blocks(self.n_subjects, self.block_rows):
            yield self.block(rows)
