"""The settings every EM calibrator of scored items checks the same way (polytomous and
continuous): tolerance, cycle caps, the standard-error method and the quadrature grid."""

from __future__ import annotations

from collections.abc import Sequence

from irt.errors import IRTError
from irt.quadrature import normal_grid


def check_em_settings(
    *,
    tol: float,
    max_iter: int,
    max_newton: int,
    standard_errors: str | None,
    se_methods: Sequence[str],
    n_quad: int,
    bound: float,
) -> None:
    """Raise ``IRTError`` with one line for the first setting out of range."""
    if not tol > 0:
        raise IRTError(f"tol must be positive, got {tol}")
    if max_iter < 1 or max_newton < 1:
        raise IRTError("max_iter and max_newton must be at least 1")
    if standard_errors is not None and standard_errors not in se_methods:
        raise IRTError(
            f"standard_errors must be one of {', '.join(se_methods)} or None, "
            f"got {standard_errors!r}"
        )
    normal_grid(n_quad, bound)  # checks them
