"""The continuous family of ``cat.calibrate`` (``crm``, ``beta``): scores in [0, 1] per
item (a similarity such as ROUGE-L, not cut into 0..m) fitted on one θ by
``irt.continuous_em``, written in ``itempool.formats.continuous_params``'s CSV, with EAP
abilities.

The items are fitted under ``ContinuousPriors.weakly_informative`` unless told
otherwise, as the graded path fits under its weakly informative priors: tens of
language models give few answers per item. ``priors=False`` is plain marginal ML.
Scores of exactly 0 or 1 are clipped to [ε, 1 − ε]; the report counts them. Pools do
not take continuous items on their own yet (a mixed pool does, ``mixed_calibration``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat.errors import CatError
from cat.pools.calibration_steps import (
    CalibrationRequest,
    Family,
    Fitted,
    given_responses,
    refuse_given,
)
from cat.pools.graded_calibration import as_abilities, at_least_min_subjects
from cat.pools.report_keys import FitReportHead, scored_fit_figures, value_stats
from cat.provenance import package_version, utc_now
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_scoring import ContinuousScores, continuous_scores
from irt.errors import DataWarning
from irt.names import CalibrationMethod, ModelGroup, model_names
from irt.scoring import Abilities, AbilityMethod
from itempool import QuestionSet
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.scores import read_continuous_responses

__all__ = [
    "AUTO_SE_MAX_PARAMETERS",
    "CONTINUOUS",
    "CONTINUOUS_MODELS",
    "ContinuousCalibrationReport",
    "check_on_off_priors",
    "oakes_unless_too_many",
]

#: The models of a continuous item.
CONTINUOUS_MODELS = model_names(ModelGroup.CONTINUOUS)
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
class ContinuousFit:
    """What the later steps take from a continuous fit: the scores and the calibrator."""

    data: ContinuousResponses
    fit: ContinuousCalibrator


def _check(request: CalibrationRequest) -> None:
    given = (
        ("--method bayes", request.method is CalibrationMethod.BAYES),
        ("--groups", request.groups is not None),
        ("--dims", request.dims is not None),
        ("--criterion", request.criterion is not None),
        ("--pool (pools do not take continuous items yet; write --out)", request.pool is not None),
        ("--cross-fit", request.cross_fit is not None),
        ("--guessing", request.guessing is not None),
        ("--collapse-scores", request.collapse_scores),
        (
            f"--scoring {request.scoring.value} (the abilities are EAP)",
            request.scoring is not AbilityMethod.EAP,
        ),
    )
    refuse_given(given, f"{{flag}} does not apply to --model {request.model}")
    if request.standard_errors not in ("auto", "oakes", "none"):
        raise CatError(
            f"--standard-errors {request.standard_errors} is not available for continuous "
            "items; use auto, oakes or none"
        )
    check_on_off_priors(request, "continuous")


def check_on_off_priors(request: CalibrationRequest, what: str) -> None:
    """Refuse priors other than on or off (the continuous and mixed fits take no others)
    and item types (which the graded models take)."""
    if not isinstance(request.priors, bool | str):
        raise CatError(f"priors for {what} items are True, False or 'all'")
    if request.item_types is not None:
        raise CatError("item_types are for --model graded, gpcm, sequential and nominal only")


def _read(request: CalibrationRequest, questions: QuestionSet | None) -> ContinuousResponses:
    if request.source is None:
        data = given_responses(request, ContinuousResponses, "a ContinuousResponses")
    else:
        data = read_continuous_responses(request.source, id_column=request.id_column)
    at_least_min_subjects(
        data.observed,
        f"{request.name}: {{answering}} subject(s) with answers; a continuous calibration",
    )
    return data


def _fit(
    request: CalibrationRequest,
    data: ContinuousResponses,
    questions: QuestionSet | None,
    fold_note: str | None,
) -> Fitted[ContinuousFit]:
    """The model fitted to every item under weakly informative priors (or none); the
    data's warnings become the report's notes."""
    model = request.model
    se_method, notes = _se_method(request.standard_errors, data.n_items)
    calibrator = ContinuousCalibrator(
        model,
        priors=ContinuousPriors.weakly_informative()
        if request.priors_on
        else ContinuousPriors.none(),
        epsilon=request.epsilon,
        n_quad=request.quad_points,
        tol=request.tol,
        max_iter=request.max_iter,
        standard_errors=se_method,
    )
    request.tell(0.0, f"fitting the {model} model")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        fit = calibrator.fit(data)
    notes += [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    report = _report(request, data, fit, notes)
    return Fitted(report, fit.params_, ContinuousFit(data, fit), done=f"{model} model fitted")


def _write(request: CalibrationRequest, fitted: Fitted[ContinuousFit]) -> list[Path]:
    if request.out is None:
        return []
    write_continuous_params(fitted.detail.fit.params_, request.out)
    return [request.out]


def _score(request: CalibrationRequest, fitted: Fitted[ContinuousFit]) -> ContinuousScores:
    request.tell(0.95, "scoring the subjects (eap)")
    return continuous_scores(fitted.detail.data, fitted.detail.fit.params_)


def _abilities(scores: ContinuousScores) -> Abilities:
    return as_abilities(scores, "eap")


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
    request: CalibrationRequest,
    data: ContinuousResponses,
    fit: ContinuousCalibrator,
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
        **scored_fit_figures(fit, request.model, observed, kinds),
        parameters={name: value_stats(values) for name, values in parts.items()},
        priors=_used_priors(fit.priors_.describe(), parts),
        standard_errors=fit.standard_errors,
        epsilon=fit.epsilon_,
        n_clipped=fit.n_clipped_,
        seed=request.seed,
        settings={k: described[k] for k in ("method", "n_quad", "bound", "tol", "max_iter")},
        data_notes=notes,
        input=request.input,
        package_version=package_version(),
        created=utc_now(),
    )


CONTINUOUS: Family[ContinuousResponses, ContinuousFit, ContinuousScores] = Family(
    name="continuous",
    models=CONTINUOUS_MODELS,
    check=_check,
    read=_read,
    fit=_fit,
    write=_write,
    score=_score,
    abilities=_abilities,
    store=None,
)
