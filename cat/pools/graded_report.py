"""The fit report of a graded calibration (``cat calibrate --model graded --report``):
the CLI contract's keys, the pool's make-up (item types, categories), a summary of the
parameters, the priors and the provenance."""

from __future__ import annotations

from typing import Any

import numpy as np

from cat.pools.report_keys import FitReportHead, scored_fit_figures, value_stats
from cat.provenance import package_version, utc_now
from irt.polytomous import PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_responses import PolytomousResponses

__all__ = ["GradedCalibrationReport", "graded_report", "parameter_summary"]


class GradedCalibrationReport(FitReportHead):
    """The fit report (``--report``): the CLI contract's keys (``FitReportHead``), and
    the rest."""

    omit_if_none = ("renumbered_scores",)

    n_parameters: int
    aic: float
    bic: float
    #: Items per type ("graded", "2PL", ...) and per number of score categories ("4").
    item_types: dict[str, int]
    categories: dict[str, int]
    #: Mean, sd, min, max of the slopes a, of all thresholds d, and of the 3PL items' c.
    parameters: dict[str, dict[str, float]]
    priors: dict[str, dict[str, Any]]
    #: How the standard errors were computed ("oakes", "xpd"), None if they were not.
    standard_errors: str | None
    seed: int
    settings: dict[str, Any]
    data_notes: list[str]
    #: With ``collapse_scores``: each renumbered item's original scores, new score k
    #: being the k-th of them.
    renumbered_scores: dict[str, list[int]] | None = None
    input: str
    package_version: str
    created: str


def graded_report(
    source: str,
    data: PolytomousResponses,
    fit: PolytomousCalibrator,
    model: str,
    *,
    seed: int,
    settings: dict[str, Any],
    notes: list[str],
    renumbered: dict[str, list[int]],
) -> GradedCalibrationReport:
    """The report of ``fit`` of ``model`` (to ``data``, read from ``source``, the
    report's ``input``); ``settings`` adds to the calibrator's."""
    observed = data.observed
    params = fit.params_
    kinds = [t.value for t in params.item_types]
    counts = [int(k) for k in params.n_categories]
    described = fit.describe()
    return GradedCalibrationReport(
        **scored_fit_figures(fit, model, observed, kinds),
        categories={str(k): counts.count(k) for k in sorted(set(counts))},
        parameters=parameter_summary(params),
        priors=fit.priors_.describe(),
        standard_errors=fit.standard_errors,
        seed=seed,
        settings={
            "estimation": described["method"],
            **{k: described[k] for k in ("n_quad", "bound", "tol", "max_iter")},
            **settings,
        },
        data_notes=notes,
        renumbered_scores=renumbered or None,
        input=source,
        package_version=package_version(),
        created=utc_now(),
    )


def parameter_summary(params: PolytomousParams) -> dict[str, dict[str, float]]:
    """Mean, sd, min and max of a, of every item's thresholds pooled (no padding), and
    of c where items have one."""
    guessing = np.array([t.has_guessing for t in params.item_types])
    parts = {"a": params.a, "d": params.d[~np.isnan(params.d)]}
    if guessing.any():
        parts["c"] = params.c[guessing]
    return {name: value_stats(values) for name, values in parts.items()}
