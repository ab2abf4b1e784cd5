"""The 0/1 family of ``cat.calibrate``: the 1PL to 4PL by EM or Bayes (``irt.estimation.methods``),
its fit report, its parameter file (params.csv) and, in a pool, the references, their
answers, their low-rank model and their cross-fitted errors under each design.

The multidimensional models (``cat.pools.multidimensional_calibration``) read, score and
store the same way, the 3PL beside them in params.csv: a fit's ``BinaryFit`` says
whether one was fitted and on which groups, which the cross-fit then includes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat.designs.models import ReferenceModels
from cat.engine.registry import DesignName
from cat.errors import CatError
from cat.pools.calibration import record_calibration, reference_rows
from cat.pools.calibration_steps import (
    CalibrationRequest,
    Family,
    Fitted,
    Stored,
    given_responses,
)
from cat.pools.loading import pool_folder_problem
from cat.pools.mirt_calibration import MultidimensionalFit, information_criteria, n_parameters
from cat.pools.report_keys import FitReportHead
from cat.pools.scenarios import ItemScenarios, scenarios_of
from cat.provenance import package_version, utc_now
from irt.checks import check_responses, warn_runaway_estimates
from irt.estimation.methods import CalibrationResult, parameter_summary
from irt.estimation.methods import calibrate as fit_items
from irt.models import ModelKind
from irt.names import ModelGroup, model_names
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import Abilities, score_abilities
from itempool import LOW_RANK, REFERENCE_ANSWERS, PredictionErrors, QuestionSet
from itempool.formats.params import write_params
from itempool.formats.responses import read_responses

__all__ = ["BINARY", "BINARY_MODELS", "CalibrationReport", "refuse_scored_only"]

BINARY_MODELS = model_names(ModelGroup.BINARY)


class CalibrationReport(FitReportHead):
    """The fit report (``--report``): the CLI contract's keys (``FitReportHead``), and
    the rest."""

    priors: dict[str, dict[str, Any]]
    seed: int
    settings: dict[str, Any]
    parameters: dict[str, dict[str, float]]
    data_notes: list[str]
    input: str
    package_version: str
    created: str
    # AIC, BIC and the free parameters of the model fitted.
    n_parameters: int | None = None
    aic: float | None = None
    bic: float | None = None
    # A multidimensional fit (--model bifactor): its factors and the unidimensional
    # companion fit it is compared with (model, loglik, aic, bic, n_parameters, seconds).
    factors: list[str] | None = None
    unidimensional: dict[str, Any] | None = None


@dataclass(frozen=True)
class BinaryFit:
    """What the later steps take from a 0/1 fit: the answers, the fit, and for a
    multidimensional model its items' groups."""

    matrix: ResponseMatrix
    result: CalibrationResult
    groups: ItemScenarios | None = None
    #: A multidimensional model fitted beside, and its figures for pool.json.
    multidimensional: MultidimensionalFit | None = None
    figures: dict[str, Any] | None = None


def refuse_scored_only(request: CalibrationRequest) -> None:
    """Refuse what only the scored and continuous models take (and priors of theirs)."""
    if request.standard_errors != "auto":
        raise CatError(
            "--standard-errors applies to --model graded, gpcm, sequential, nominal, crm "
            "and beta only"
        )
    if request.collapse_scores:
        raise CatError(
            "--collapse-scores applies to --model graded, gpcm, sequential and nominal only"
        )
    if request.item_types is not None:
        raise CatError("item_types are for --model graded, gpcm, sequential and nominal only")
    if not isinstance(request.priors, bool | str | ItemPriors):
        raise CatError("priors for the 1PL-4PL are True, False, 'all' or an ItemPriors")


def check_pool_folder(request: CalibrationRequest) -> None:
    """Refuse a pool folder that is missing or a file, before any work."""
    if request.pool is not None and (missing := pool_folder_problem(request.pool)) is not None:
        raise CatError(f"--pool {request.pool}: {missing}")


def _check(request: CalibrationRequest) -> None:
    refuse_scored_only(request)
    if request.groups is not None:
        raise CatError("--groups names the specific factors of --model bifactor; give that model")
    if request.dims is not None:
        raise CatError("--dims is the number of factors of --model mirt; give that model")
    if request.criterion is not None:
        raise CatError(
            "--criterion is how the bifactor or mirt design picks items: give --model "
            "bifactor, or mirt with one factor per scenario"
        )
    check_pool_folder(request)


def read(request: CalibrationRequest, questions: QuestionSet | None) -> ResponseMatrix:
    """The 0/1 answers, from the file or as given."""
    if request.source is None:
        return given_responses(request, ResponseMatrix, "a ResponseMatrix (0/1 answers)")
    return read_responses(request.source, id_column=request.id_column)


def fit_unidimensional(
    request: CalibrationRequest, matrix: ResponseMatrix, model: ModelKind, fold_note: str | None
) -> tuple[CalibrationResult, CalibrationReport]:
    """``model`` fitted to ``matrix`` under the priors asked for, and its report (with
    the data's notes); estimates that ran off warn."""
    notes = check_responses(matrix) + ([fold_note] if fold_note else [])
    priors = request.priors
    given = ItemPriors() if priors == "all" else priors
    result = fit_items(
        matrix,
        model,
        request.method,
        priors=given if isinstance(given, ItemPriors) else None if priors else ItemPriors.none(),
        seed=request.seed,
        tol=request.tol,
        max_iter=request.max_iter,
        n_quad=request.quad_points,
        progress=request.progress,
        device=request.device,
    )
    # Under a prior on b an estimate that ran off has no more to go on than the prior.
    remedy = (
        "more subjects answering them would place them"
        if result.priors.has_b
        else "fit with priors on a and b (cat calibrate --priors), or on more subjects"
    )
    warn_runaway_estimates(result.params, remedy)
    return result, _report(request, matrix, result, notes)


def _fit(
    request: CalibrationRequest,
    matrix: ResponseMatrix,
    questions: QuestionSet | None,
    fold_note: str | None,
) -> Fitted[BinaryFit]:
    result, report = fit_unidimensional(request, matrix, ModelKind(request.model), fold_note)
    return Fitted(report, result.params, BinaryFit(matrix, result))


def _write(request: CalibrationRequest, fitted: Fitted[BinaryFit]) -> list[Path]:
    if request.out is None:
        return []
    write_params(fitted.detail.result.params, request.out)
    return [request.out]


def score(request: CalibrationRequest, fitted: Fitted[BinaryFit]) -> Abilities:
    """The subjects' abilities under the unidimensional fit (``scoring``)."""
    return score_abilities(fitted.detail.matrix, fitted.detail.result.params, request.scoring)


def store(
    request: CalibrationRequest,
    fitted: Fitted[BinaryFit],
    abilities: Abilities,
    questions: QuestionSet,
    folds: int | None,
) -> Stored:
    """Store the calibration in the pool: params.csv, reference.jsonl, the references'
    answers and low-rank model, and with ``folds`` their cross-fitted errors under each
    design (a multidimensional model's design too, when fitted on the items' groups)."""
    assert request.pool is not None
    detail = fitted.detail
    matrix, result = detail.matrix, detail.result
    errors = None
    if folds is not None:
        grouped = detail.multidimensional is not None and request.dims is None
        design = request.model if grouped else None
        errors = _cross_fit(request, questions, matrix, result.model, folds, detail.groups, design)
    record_calibration(
        request.pool,
        result.params,
        reference_rows(matrix, abilities),
        _provenance(request, matrix, result),
        None if errors is None else errors[DesignName.IRT].model_dump(),
        matrix,
        None if errors is None else {k: e.model_dump() for k, e in errors.items()},
        ReferenceModels.fit(matrix).low_rank,
    )
    names = ("params.csv", "reference.jsonl", REFERENCE_ANSWERS, LOW_RANK, "pool.json")
    return Stored(errors, [request.pool / name for name in names])


def _cross_fit(
    request: CalibrationRequest,
    questions: QuestionSet,
    matrix: ResponseMatrix,
    model: ModelKind,
    folds: int,
    groups: ItemScenarios | None,
    multidimensional: str | None,
) -> dict[str, PredictionErrors]:
    """The references' cross-fitted errors per design, the IRT design's ``model`` the
    unidimensional fit's, content-balanced when every item has a scenario in the pool
    (then with each design's errors per scenario). With a ``multidimensional`` model
    ("bifactor" or "mirt") and its ``groups``, that model's design too, and those
    groups are the scenarios."""
    from cat.prediction.cross_fit import cross_fit_errors

    items = questions.items
    known = {item.id for item in items}
    scenario, names = None, None
    if multidimensional is not None and groups is not None:
        scenario, names = groups.codes, groups.names
    elif all(item.scenario for item in items) and known.issuperset(matrix.item_ids):
        found = scenarios_of(items, matrix.item_ids)
        scenario, names = found.codes, found.names
    return cross_fit_errors(
        matrix,
        model,
        folds,
        list(request.cross_fit_lengths),
        request.seed,
        scenario,
        request.cross_fit_progress,
        scenario_names=names,
        multidimensional=multidimensional,
        guessing=request.guessing is not False,
        criterion=request.criterion,
    )


def _provenance(
    request: CalibrationRequest, matrix: ResponseMatrix, result: CalibrationResult
) -> dict[str, Any]:
    return {
        "method": result.method.value,
        "model": result.model.value,
        "priors": result.priors.describe(),
        "seed": result.seed,
        "n_subjects": matrix.n_subjects,
        "n_items": matrix.n_items,
        "loglik": result.loglik,
        "converged": result.converged,
        "scoring": request.scoring.value,
        "source": request.name,
        "package_version": package_version(),
        "date": utc_now(),
        **result.settings,
    }


def _report(
    request: CalibrationRequest,
    matrix: ResponseMatrix,
    result: CalibrationResult,
    notes: list[str],
) -> CalibrationReport:
    n_responses = matrix.answer_counts().n_answers
    k = n_parameters(result.model, matrix.n_items)
    return CalibrationReport(
        model=result.model.value,
        method=result.method.value,
        n_subjects=matrix.n_subjects,
        n_items=matrix.n_items,
        n_responses=n_responses,
        missing_share=float(1 - n_responses / matrix.values.size),
        loglik=result.loglik,
        logpost=result.logpost,
        n_iter=result.n_iter,
        converged=result.converged,
        seconds=round(result.seconds, 4),
        priors=result.priors.describe(),
        seed=result.seed,
        settings=result.settings,
        parameters=parameter_summary(result.params),
        data_notes=notes,
        input=request.input,
        package_version=package_version(),
        created=utc_now(),
        n_parameters=k,
        **information_criteria(result.loglik, k, matrix.n_subjects),
    )


def _identity(abilities: Abilities) -> Abilities:
    return abilities


BINARY: Family[ResponseMatrix, BinaryFit, Abilities] = Family(
    name="binary",
    models=BINARY_MODELS,
    check=_check,
    read=read,
    fit=_fit,
    write=_write,
    score=score,
    abilities=_identity,
    store=store,
)
