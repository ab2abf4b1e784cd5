"""The array library a fit's per-cycle arithmetic runs in: numpy on the host, or torch on
a device (``irt.estimation.devices``).

The binary family's E-step and M-step are written once against the functions both
libraries share (the Python array API standard; numpy's own namespace, and torch's
through ``array_api_compat``), so the torch path is the same algorithm as the numpy path,
not a second implementation. What the two spell differently (creating arrays, copies,
integer casts, the trip back to numpy) lives here. numpy arrays keep plain numpy, so the
host path runs exactly as it did before torch was an option.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from irt.types import FloatArray

#: A numpy array or a torch tensor: what the namespace-generic functions take.
Array = Any


def namespace(x: Array) -> ModuleType:
    """The array namespace of ``x``: numpy itself for numpy arrays and Python numbers."""
    if is_numpy(x):
        return np
    from array_api_compat import array_namespace

    return array_namespace(x)


def is_numpy(x: Array) -> bool:
    """Whether ``x`` is a numpy array or a number (anything but a tensor)."""
    return isinstance(x, np.ndarray | np.generic | float | int)


def zeros(shape: int | tuple[int, ...], like: Array) -> Array:
    """Zeros of ``like``'s float type on its device."""
    if is_numpy(like):
        return np.zeros(shape)
    return like.new_zeros(shape)


def empty(shape: int | tuple[int, ...], like: Array) -> Array:
    if is_numpy(like):
        return np.empty(shape)
    return like.new_empty(shape)


def ones(shape: int | tuple[int, ...], like: Array) -> Array:
    if is_numpy(like):
        return np.ones(shape)
    return like.new_ones(shape)


def trues(n: int, like: Array) -> Array:
    """A boolean vector of ``n`` True on ``like``'s device."""
    if is_numpy(like):
        return np.ones(n, dtype=bool)
    return like.new_ones(n, dtype=namespace(like).bool)


def eye(k: int, like: Array) -> Array:
    if is_numpy(like):
        return np.eye(k)
    return namespace(like).eye(k, dtype=like.dtype, device=like.device)


def arange(n: int, like: Array) -> Array:
    """0, 1, …, n − 1 as integers on ``like``'s device."""
    if is_numpy(like):
        return np.arange(n)
    return namespace(like).arange(n, device=like.device)


def as_float64(x: Array) -> Array:
    """``x`` (booleans or small integers) as float64 on its device."""
    if is_numpy(x):
        return x.astype(np.float64)
    return x.to(namespace(x).float64)


def as_index(x: Array) -> Array:
    """Whole-number floats as integers, for indexing."""
    if is_numpy(x):
        return x.astype(np.int_)
    return x.long()


def vector(values: list[float], like: Array) -> Array:
    """A small float vector on ``like``'s device."""
    if is_numpy(like):
        return np.array(values, dtype=np.float64)
    return like.new_tensor(values)


def column_dots(x: Array, y: Array) -> Array:
    """Σ_n x_nj y_nj for each column j."""
    if is_numpy(x):
        return np.einsum("nj,nj->j", x, y)
    import torch

    return torch.einsum("nj,nj->j", x, y)


def copy(x: Array) -> Array:
    return x.copy() if is_numpy(x) else x.clone()


def to_numpy(x: Array) -> FloatArray:
    """``x`` as a numpy array on the host (numpy arrays pass through)."""
    if is_numpy(x):
        return np.asarray(x)
    return np.asarray(x.detach().cpu().numpy())


def concat(parts: list[Array], axis: int = 0) -> Array:
    """The arrays ``parts`` joined along ``axis``."""
    if is_numpy(parts[0]):
        return np.concatenate(parts, axis=axis)
    return namespace(parts[0]).concat(parts, axis=axis)


def stack(parts: list[Array], axis: int = 0) -> Array:
    """The arrays ``parts`` stacked along a new ``axis``."""
    if is_numpy(parts[0]):
        return np.stack(parts, axis=axis)
    return namespace(parts[0]).stack(parts, axis=axis)


def cumsum(x: Array, axis: int) -> Array:
    """Running sums along ``axis``."""
    if is_numpy(x):
        return np.cumsum(x, axis=axis)
    return x.cumsum(dim=axis)


def einsum(spec: str, *operands: Array) -> Array:
    """``numpy.einsum`` or ``torch.einsum`` by the operands' library."""
    if is_numpy(operands[0]):
        # numpy multiplies three operands in one loop unless told to pair them (three
        # times slower on an M-step's arrays); torch always pairs them.
        return np.einsum(spec, *operands, optimize=len(operands) > 2)
    import torch

    return torch.einsum(spec, *operands)


def log_sum_exp(x: Array, axis: int) -> Array:
    """log Σ exp(x) along ``axis``, the axis kept (numpy's ``logaddexp.reduce``)."""
    if is_numpy(x):
        return np.logaddexp.reduce(x, axis=axis, keepdims=True)
    return x.logsumexp(dim=axis, keepdim=True)


def clip(x: Array, lower: Array | float, upper: Array | float) -> Array:
    """``x`` clipped to [lower, upper]; numpy bounds are moved to a tensor's device."""
    if is_numpy(x):
        return np.clip(x, lower, upper)
    xp = namespace(x)
    bounds = [
        b if isinstance(b, int | float) else xp.asarray(b, device=x.device) for b in (lower, upper)
    ]
    return xp.clip(x, *bounds)


def like(values: FloatArray, x: Array) -> Array:
    """The numpy ``values`` as an array of ``x``'s library and device."""
    if is_numpy(x):
        return values
    return namespace(x).asarray(values, device=x.device)


def permute(x: Array, axes: tuple[int, ...]) -> Array:
    """``x`` with its axes in the order ``axes`` (numpy's ``transpose``)."""
    if is_numpy(x):
        return x.transpose(axes)
    return x.permute(*axes)
