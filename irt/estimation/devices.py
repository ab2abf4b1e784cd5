"""Where a fit's per-cycle arithmetic runs: numpy on the host, or torch on a device.

``device`` is what ``cat calibrate --device`` and ``cat.calibrate(device=...)`` take:

- ``"cpu"`` (the default): numpy on this machine's processors.
- ``"cuda"`` or ``"cuda:K"``: torch on that GPU (torch must see it).
- ``"auto"``: a GPU when torch is installed and sees one, else ``"cpu"``.
- ``"torch:cpu"`` (or ``"torch:cuda:K"``): torch on the named device. On the processors
  it is slower than numpy (1.6 times at 10,000 x 30,000, where numpy works in
  cache-sized pieces); it is there to test and benchmark the torch path without a GPU.

The torch path runs the same E-step and M-step functions as the numpy path
(``irt.estimation.arrays``), in float64, so that both give the same fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irt.design_blocks import BLOCK_BYTES, DesignMatrices
from irt.errors import IRTError
from irt.estimation.arrays import Array
from irt.quadrature import QuadratureGrid
from irt.types import FloatArray

#: Bytes of one float block of subjects on a GPU: its memory is the limit, not a cache.
GPU_BLOCK_BYTES = 512 * 2**20

_INSTALL = 'pip install torch==2.13.0 array-api-compat (or pip install -e ".[gpu]")'


@dataclass(frozen=True)
class Backend:
    """numpy on the host (``torch_device`` None), or torch on ``torch_device``."""

    torch_device: str | None = None

    @property
    def name(self) -> str:
        """What the fit report records: "cpu", or "torch:" and torch's device."""
        return "cpu" if self.torch_device is None else f"torch:{self.torch_device}"

    def asarray(self, values: FloatArray) -> Array:
        """``values`` (numpy) as this backend's float64 array."""
        if self.torch_device is None:
            return values
        import torch

        return torch.as_tensor(np.ascontiguousarray(values), device=self.torch_device)

    def grid(self, grid: QuadratureGrid) -> QuadratureGrid:
        """The quadrature grid with its points and log weights on this backend."""
        if self.torch_device is None:
            return grid
        return QuadratureGrid(self.asarray(grid.points), self.asarray(grid.log_weights))

    def design(self, design: DesignMatrices) -> DesignMatrices:
        """The response codes on this backend (on a device a ``DeviceDesign``, holding
        them as int8 there)."""
        if self.torch_device is None:
            return design
        from irt.estimation.device_design import DeviceDesign

        return DeviceDesign.of(design, self.torch_device, self.block_bytes)

    @property
    def block_bytes(self) -> int:
        """Bytes of one float block of subjects: cache-sized on the processors (numpy or
        torch), as large as memory allows on a GPU."""
        on_gpu = self.torch_device not in (None, "cpu")
        return GPU_BLOCK_BYTES if on_gpu else BLOCK_BYTES


HOST = Backend()


def resolve_device(device: str = "cpu") -> Backend:
    """The backend for ``device`` (see the module docstring); raises ``IRTError`` for an
    unknown name, or a GPU torch cannot use, with what to do."""
    name = str(device).strip().lower()
    if name == "cpu":
        return HOST
    if name == "auto":
        torch = _torch_or_none()
        return Backend("cuda") if torch is not None and torch.cuda.is_available() else HOST
    if name.startswith("torch:"):
        return _torch_backend(name.removeprefix("torch:"), device)
    if name == "cuda" or name.startswith("cuda:"):
        return _torch_backend(name, device)
    raise IRTError(
        f"unknown device {device!r}: use cpu, auto, cuda, cuda:K, or torch:cpu "
        "(the torch path on the processors, for testing)"
    )


def _torch_backend(torch_device: str, given: str) -> Backend:
    torch = _torch_or_none()
    if torch is None:
        raise IRTError(f"device {given!r} needs torch and array-api-compat: {_INSTALL}")
    try:
        where = torch.device(torch_device)
    except (RuntimeError, ValueError) as exc:
        raise IRTError(f"unknown device {given!r}: {exc}") from exc
    if where.type == "cuda":
        if not torch.cuda.is_available():
            raise IRTError(
                f"device {given!r}: torch sees no GPU here (torch {torch.__version__}); "
                "use --device cpu, or auto to take a GPU only where there is one"
            )
        if where.index is not None and where.index >= torch.cuda.device_count():
            raise IRTError(
                f"device {given!r}: torch sees {torch.cuda.device_count()} GPU(s), numbered from 0"
            )
    elif where.type != "cpu":
        raise IRTError(f"device {given!r}: only cpu and cuda devices are supported")
    return Backend(str(where))


def _torch_or_none() -> Any:
    """torch, when it and array-api-compat (its array namespace) are installed."""
    try:
        import array_api_compat  # noqa: F401
        import torch
    except ImportError:
        return None
    return torch
