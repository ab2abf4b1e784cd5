"""What every family's internal coordinates share: the logistic maps between them and
the natural parameters, and the box they are kept in.

Slopes, intercepts, and asymptotes as logits are moved by the M-steps (``irt.mstep``,
``ItemFamily.to_internal``); these bounds keep c and d away from 0 and 1 and slopes and
intercepts finite, whichever model the item has. Written against the functions numpy and
torch share, so that a fit on a GPU uses them too.
"""

from __future__ import annotations

from irt.estimation.arrays import namespace
from irt.types import FloatArray

__all__ = [
    "INTERCEPT_BOUND",
    "LOGIT_BOUND",
    "LOG_SLOPE_BOUNDS",
    "RAW_SLOPE_BOUND",
    "log_sigmoid",
    "sigmoid",
]

#: Logits of the asymptotes c and d stay within ±this.
LOGIT_BOUND = 12.0
#: log a stays within these bounds where a slope is moved on the log scale.
LOG_SLOPE_BOUNDS = (-5.0, 3.5)
#: A slope moved on its own scale stays within ±this.
RAW_SLOPE_BOUND = 30.0
#: Intercepts (thresholds) stay within ±this.
INTERCEPT_BOUND = 60.0


def sigmoid(x: FloatArray) -> FloatArray:
    """The logistic function 1 / (1 + e^−x), without overflow (numpy or torch)."""
    return 0.5 * (1.0 + namespace(x).tanh(0.5 * x))  # type: ignore[no-any-return]


def log_sigmoid(z: FloatArray) -> FloatArray:
    """log σ(z) = −log(1 + e^{−z}) without overflow (numpy or torch, like ``z``)."""
    xp = namespace(z)
    return xp.minimum(z, 0.0) - xp.log1p(xp.exp(-xp.abs(z)))  # type: ignore[no-any-return]
