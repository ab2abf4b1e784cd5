"""The keys every calibration report (``cat calibrate --report``) begins with: the CLI
contract's (DESIGN.md) and the data's size, shared by the 0/1 and the graded fits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from cat.results import ResultModel
from irt.types import BoolArray


class FitReportHead(ResultModel):
    """model, method, n_subjects, n_items, loglik (marginal), n_iter, converged and
    seconds (the contract's), with the responses' count and missing share and the log
    posterior (the log-likelihood plus the log prior)."""

    model: str
    method: str
    n_subjects: int
    n_items: int
    n_responses: int
    missing_share: float
    loglik: float
    logpost: float
    n_iter: int
    converged: bool
    seconds: float


class _ScoredFit(Protocol):
    """What a fitted scored calibrator (graded or continuous) reports."""

    loglik_: float
    logpost_: float
    n_iter_: int
    converged_: bool
    seconds_: float
    n_parameters_: int
    aic_: float
    bic_: float


def scored_fit_figures(
    fit: _ScoredFit, model: str, observed: BoolArray, item_types: Sequence[str]
) -> dict[str, Any]:
    """The report keys a graded or continuous fit fills alike: the head's, the fit
    criteria and the items per type, from ``observed`` (subjects × items answered)."""
    return {
        "model": model,
        "method": "em",
        "n_subjects": int(observed.shape[0]),
        "n_items": int(observed.shape[1]),
        "n_responses": int(observed.sum()),
        "missing_share": float(1 - observed.mean()),
        "loglik": fit.loglik_,
        "logpost": fit.logpost_,
        "n_iter": fit.n_iter_,
        "converged": fit.converged_,
        "seconds": round(fit.seconds_, 4),
        "n_parameters": fit.n_parameters_,
        "aic": fit.aic_,
        "bic": fit.bic_,
        "item_types": {k: list(item_types).count(k) for k in sorted(set(item_types))},
    }


def value_stats(values: Any) -> dict[str, float]:
    """Mean, sd, min and max of ``values``, for a report's parameter summary."""
    arr = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(arr.mean()),
        "sd": float(arr.std()),
        "min": float(arr.min()),
        "max": float(arr.max()),
    }
