"""The fit report of a mixed calibration (``cat calibrate --continuous --report``): the
CLI contract's keys, the items per type, a summary of the scored and continuous items'
parameters, and the continuous model chosen with every candidate's figures."""

from __future__ import annotations

from typing import Any

from cat.pools.calibration_steps import CalibrationRequest
from cat.pools.report_keys import FitReportHead, scored_fit_figures, value_stats
from cat.provenance import package_version, utc_now
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator

__all__ = ["MixedCalibrationReport", "mixed_report"]


class MixedCalibrationReport(FitReportHead):
    """The fit report (``--report``): the CLI contract's keys, then the rest."""

    n_parameters: int
    aic: float
    bic: float
    item_types: dict[str, int]
    #: Mean, sd, min and max of the scored items' a and the continuous items' a, d,
    #: σ (crm) and τ (beta).
    parameters: dict[str, dict[str, dict[str, float]]]
    priors: dict[str, Any]
    standard_errors: str | None
    #: The continuous items' model: "chosen", "requested", and each model fitted with
    #: its loglik, aic and bic.
    continuous_model: dict[str, Any]
    epsilon: float
    n_clipped: int
    seed: int
    settings: dict[str, Any]
    data_notes: list[str]
    input: str
    #: The continuous scores' own file (None when RESPONSES held both, with --pool).
    continuous_input: str | None
    package_version: str
    created: str


def mixed_report(
    request: CalibrationRequest,
    data: MixedResponses,
    fit: MixedCalibrator,
    params: MixedParams,
    fits: dict[str, MixedCalibrator],
    se_method: str | None,
    notes: list[str],
) -> MixedCalibrationReport:
    """The report of the kept ``fit`` (its ``params`` with their standard errors by
    ``se_method``) among every candidate's ``fits``."""
    disc, cont = params.discrete, params.continuous
    assert cont is not None and data.continuous is not None
    crm = cont.is_crm
    continuous_parts = {"a": cont.a, "d": cont.d}
    if crm.any():
        continuous_parts["sigma"] = cont.sigma[crm]
    if not crm.all():
        continuous_parts["tau"] = cont.tau[~crm]
    described = fit.describe()
    chosen = next(name for name, f in fits.items() if f is fit)
    return MixedCalibrationReport(
        **scored_fit_figures(
            fit, f"{request.model}+{chosen}", data.observed, list(params.item_types)
        ),
        parameters={
            "scored": {} if disc is None else {"a": value_stats(disc.a)},
            "continuous": {k: value_stats(v) for k, v in continuous_parts.items()},
        },
        priors={
            "scored": described["discrete_priors"],
            "continuous": described["continuous_priors"],
        },
        standard_errors=se_method,
        continuous_model={
            "requested": request.continuous_model,
            "chosen": chosen,
            "rule": "lower AIC (same data, same number of parameters)",
            "fits": {
                name: {"loglik": f.loglik_, "aic": f.aic_, "bic": f.bic_}
                for name, f in fits.items()
            },
        },
        epsilon=fit.epsilon,
        n_clipped=data.continuous.n_clipped(fit.epsilon),
        seed=request.seed,
        settings={k: described[k] for k in ("method", "n_quad", "bound", "tol", "max_iter")},
        data_notes=notes,
        input=request.input,
        continuous_input=_continuous_input(request),
        package_version=package_version(),
        created=utc_now(),
    )


def _continuous_input(request: CalibrationRequest) -> str | None:
    """The report's ``continuous_input``: the continuous scores' own file, if any."""
    if request.continuous_source is not None:
        return str(request.continuous_source)
    return None if request.continuous is None else "(in memory)"
