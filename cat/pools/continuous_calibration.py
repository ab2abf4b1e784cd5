"""``cat calibrate --model crm|beta``: read scores in [0, 1] per item (a similarity such
as ROUGE-L, not cut into 0..m), fit them on one θ by ``irt.continuous_em``, and write
the item parameters (``itempool.formats.continuous_params``), the abilities (EAP) and
the fit report.

The items are fitted under ``ContinuousPriors.weakly_informative`` unless told
otherwise, as the graded path fits under its weakly informative priors: tens of
language models give few answers per item. ``priors=False`` is plain marginal ML.
Scores of exactly 0 or 1 are clipped to [ε, 1 − ε]; the report counts them. Pools do
not take continuous items yet, so this writes files only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat.errors import CatError
from cat.pools.graded_calibration import MIN_SUBJECTS, as_abilities
from cat.pools.loading import check_output_folders
from cat.pools.report_keys import FitReportHead, scored_fit_figures, value_stats
from cat.provenance import package_version, utc_now
from irt.continuous import ContinuousParams
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_kernels import DEFAULT_EPSILON
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_scoring import continuous_scores
from irt.errors import DataWarning
from irt.fit import FitProgress
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.params import write_abilities
from itempool.formats.scores import read_continuous_responses

__all__ = [
    "AUTO_SE_MAX_PARAMETERS",
    "CONTINUOUS_MODELS",
    "ContinuousCalibrationOutcome",
    "ContinuousCalibrationReport",
    "calibrate_continuous",
]

#: The models of a continuous item.
CONTINUOUS_MODELS = ("crm", "beta")
#: ``standard_errors`` "auto" computes them up to this many free parameters (3 an item).
AUTO_SE_MAX_PARAMETERS = 2000


class ContinuousCalibrationReport(FitReportHead):
    """The fit report (``--report``): the CLI contract's keys (``FitReportHead``), and
    the rest."""

    n_parameters: int
    aic: float
    bic: float
    item_types: dict[str, int]
    #: Mean, sd, min and max of a, d, and σ (crm items) or τ (beta items).
    parameters: dict[str, dict[str, float]]
    priors: dict[str, dict[str, Any]]
    standard_errors: str | None
    #: Scores are clipped to [epsilon, 1 − epsilon]; n_clipped were moved there.
    epsilon: float
    n_clipped: int
    seed: int
    settings: dict[str, Any]
    data_notes: list[str]
    input: str
    package_version: str
    created: str


@dataclass(frozen=True)
class ContinuousCalibrationOutcome:
    """What ``calibrate_continuous`` produced, and which files it wrote."""

    report: ContinuousCalibrationReport
    params: ContinuousParams
    written: list[Path] = field(default_factory=list)


def calibrate_continuous(
    responses: Path,
    *,
    model: str = "beta",
    out: Path | None = None,
    report: Path | None = None,
    abilities: Path | None = None,
    seed: int = 0,
    priors: bool = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    standard_errors: str = "auto",
    epsilon: float = DEFAULT_EPSILON,
    progress: FitProgress | None = None,
) -> ContinuousCalibrationOutcome:
    """Fit ``model`` ("crm" or "beta") to every item of the scores in ``responses``
    (``itempool.formats.scores``' files) and write the parameters to ``out``, the EAP
    abilities to ``abilities`` and the report to ``report``. ``standard_errors``:
    "auto" (observed information up to ``AUTO_SE_MAX_PARAMETERS`` free parameters),
    "oakes" or "none". EM is deterministic: ``seed`` is only recorded.

    Raises:
        CatError: a setting, the data or an output folder is unusable.
        IRTError: the file is unreadable or malformed.
    """
    if model not in CONTINUOUS_MODELS:
        raise CatError(f"unknown continuous model {model!r}; choose from crm, beta")
    if standard_errors not in ("auto", "oakes", "none"):
        raise CatError(
            f"--standard-errors {standard_errors} is not available for continuous items; "
            "use auto, oakes or none"
        )
    if out is None:
        raise CatError("say where the parameters go: --out PARAMS.csv")
    check_output_folders(out, report, abilities)
    data = read_continuous_responses(responses, id_column=id_column)
    answering = int(data.observed.any(axis=1).sum())
    if answering < MIN_SUBJECTS:
        raise CatError(
            f"{responses.name}: {answering} subject(s) with answers; a continuous "
            f"calibration needs at least {MIN_SUBJECTS}"
        )
    se_method, notes = _se_method(standard_errors, data.n_items)
    calibrator = ContinuousCalibrator(
        model,
        priors=ContinuousPriors.weakly_informative() if priors else ContinuousPriors.none(),
        epsilon=epsilon,
        n_quad=quad_points,
        tol=tol,
        max_iter=max_iter,
        standard_errors=se_method,
    )
    if progress is not None:
        progress(0.0, f"fitting the {model} model")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        fit = calibrator.fit(data)
    notes += [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    fit_report = _report(responses, data, fit, model, seed, notes)
    write_continuous_params(fit.params_, out)
    written = [out]
    if abilities is not None:
        if progress is not None:
            progress(0.95, "scoring the subjects (eap)")
        scores = continuous_scores(data, fit.params_)
        write_abilities(as_abilities(scores, "eap"), abilities)
        written.append(abilities)
    if report is not None:
        fit_report.write_json(report)
        written.append(report)
    if progress is not None:
        progress(1.0, f"{model} model fitted")
    return ContinuousCalibrationOutcome(fit_report, fit.params_, written)


def _se_method(choice: str, n_items: int) -> tuple[str | None, list[str]]:
    """The calibrator's ``standard_errors`` for ``choice``, and a note when "auto"
    leaves them out."""
    method, note = oakes_unless_too_many(choice, 3 * n_items)
    return method, [] if note is None else [note]


def oakes_unless_too_many(choice: str, n_parameters: int) -> tuple[str | None, str | None]:
    """``standard_errors`` "auto", "oakes" or "none" as a calibrator takes it: "auto"
    is Oakes' observed information up to ``AUTO_SE_MAX_PARAMETERS`` free parameters
    and none beyond, with the note that says so (shared with the mixed fit)."""
    if choice != "auto":
        return (None if choice == "none" else choice), None
    if n_parameters <= AUTO_SE_MAX_PARAMETERS:
        return "oakes", None
    return None, (
        f"no standard errors: {n_parameters:,} free parameters are more than the "
        f"{AUTO_SE_MAX_PARAMETERS:,} they are computed for by default "
        "(--standard-errors oakes computes them anyway, slowly)"
    )


def _used_priors(described: dict[str, Any], parts: dict[str, Any]) -> dict[str, Any]:
    """The priors on parameters the items have: no σ prior without crm items, no τ prior
    without beta ones."""
    unused = {"log_sigma"} if "sigma" not in parts else set()
    unused |= {"tau"} if "tau" not in parts else set()
    return {name: spec for name, spec in described.items() if name not in unused}


def _report(
    source: Path,
    data: ContinuousResponses,
    fit: ContinuousCalibrator,
    model: str,
    seed: int,
    notes: list[str],
) -> ContinuousCalibrationReport:
    params = fit.params_
    observed = data.observed
    crm = [t.value == "crm" for t in params.item_types]
    parts = {"a": params.a, "d": params.d}
    if any(crm):
        parts["sigma"] = params.sigma[crm]
    if not all(crm):
        parts["tau"] = params.tau[[not c for c in crm]]
    described = fit.describe()
    kinds = [t.value for t in params.item_types]
    return ContinuousCalibrationReport(
        **scored_fit_figures(fit, model, observed, kinds),
        parameters={name: value_stats(values) for name, values in parts.items()},
        priors=_used_priors(fit.priors_.describe(), parts),
        standard_errors=fit.standard_errors,
        epsilon=fit.epsilon_,
        n_clipped=fit.n_clipped_,
        seed=seed,
        settings={k: described[k] for k in ("method", "n_quad", "bound", "tol", "max_iter")},
        data_notes=notes,
        input=str(source),
        package_version=package_version(),
        created=utc_now(),
    )
