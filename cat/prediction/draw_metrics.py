"""The figures of ``cat validate`` rows over several draws of the training subjects
(``cat.prediction.draws``): each the mean over the draws of that draw's figure, and the
``_sd`` keys the sd over the draws (a random row's figure of one draw is itself the
mean over its ``--repeats``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cat.prediction.predictions import Predictions

#: Figures averaged over the draws (None where no draw defines them).
MEANS = (
    "kendall_tau",
    "spearman",
    "mae",
    "rmse",
    "coverage",
    "mean_interval_width",
    "coverage_theta_only",
    "mean_interval_width_theta_only",
    "scenario_coverage_mean",
    "scenario_coverage_min",
    "scenario_mae_mean",
)
#: Each sd key and the figure whose spread over the draws it holds.
SDS = {"kendall_tau_sd": "kendall_tau", "mae_sd": "mae", "coverage_sd": "coverage"}
#: Per-scenario lists, averaged scenario by scenario.
LISTS = ("scenario_coverage", "scenario_mae")


def across_draws(draws: list[list[Predictions]]) -> list[dict[str, Any]]:
    """One row of figures (``Predictions.metrics``'s keys and ``splits``) per policy,
    length and predictor of the first draw, over every draw."""
    keyed = [{(p.policy, p.length, p.predictor): p for p in draw} for draw in draws]
    rows = []
    for key in keyed[0]:
        rows.append(combined([by_key[key].metrics() for by_key in keyed]))
    return rows


def combined(figures: list[dict[str, Any]]) -> dict[str, Any]:
    """The draws' ``figures`` of one row as one: means, and sds over the draws; one
    draw's unchanged."""
    row = {**figures[0], "splits": len(figures)}
    if len(figures) == 1:
        return row
    for name in MEANS:
        if name in row:
            row[name] = _mean([f[name] for f in figures])
    for sd, name in SDS.items():
        row[sd] = _sd([f[name] for f in figures])
    for name in LISTS:
        if row.get(name) is not None:
            columns = zip(*(f[name] for f in figures), strict=True)
            row[name] = [_mean(list(values)) for values in columns]
    reasons: dict[str, str] = {}
    for f in figures:
        for name, why in (f["null_reasons"] or {}).items():
            if row[name] is None:
                reasons.setdefault(name, why)
    row["null_reasons"] = reasons or None
    return row


def _defined(values: list[float | None]) -> list[float]:
    # A NaN (an MAE no draw should have) is kept, for the report to refuse (refuse_nan).
    return [float(v) for v in values if v is not None]


def _mean(values: list[float | None]) -> float | None:
    """The mean of the draws that define the figure; None where none does."""
    defined = _defined(values)
    return float(np.mean(defined)) if defined else None


def _sd(values: list[float | None]) -> float | None:
    """The sd (n − 1) over the draws that define the figure; None under two."""
    defined = _defined(values)
    return float(np.std(defined, ddof=1)) if len(defined) > 1 else None
