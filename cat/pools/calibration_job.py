"""``cat calibrate`` as one function: read responses, fit, score, write the parameters,
the abilities, the fit report and (into a pool) the references and their cross-fitted
prediction errors.

    outcome = calibrate_responses(Path("responses.jsonl"), model="3pl", out=Path("params.csv"))
    outcome.report.loglik
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat.designs.models import ReferenceModels
from cat.engine.registry import DesignName
from cat.errors import CatError
from cat.pools.calibration import record_calibration, reference_rows
from cat.pools.loading import check_output_folders, read_pool_questions
from cat.provenance import package_version, utc_now
from cat.results import ResultModel
from irt.checks import check_responses
from irt.fit import CalibrationMethod, CalibrationResult, FitProgress, parameter_summary
from irt.fit import calibrate as fit_items
from irt.models import ItemParams, ModelKind
from irt.params_io import write_abilities, write_params
from irt.priors import ItemPriors
from irt.readers import read_responses
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from itempool import LOW_RANK, REFERENCE_ANSWERS, PredictionErrors


class CalibrationReport(ResultModel):
    """The fit report (``--report``): the CLI contract's model, method, n_subjects,
    n_items, loglik (marginal), n_iter, converged, seconds, and the rest."""

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
    priors: dict[str, dict[str, Any]]
    seed: int
    settings: dict[str, Any]
    parameters: dict[str, dict[str, float]]
    data_notes: list[str]
    input: str
    package_version: str
    created: str


@dataclass(frozen=True)
class CalibrationOutcome:
    """What ``calibrate_responses`` produced, and which files it wrote."""

    report: CalibrationReport
    params: ItemParams
    #: Per design (``cat.engine.registry.DESIGN_NAMES``), the references' errors.
    cross_fit: dict[str, PredictionErrors] | None = None
    written: list[Path] = field(default_factory=list)


def calibrate_responses(
    responses: Path,
    *,
    model: ModelKind | str = ModelKind.THREE_PL,
    method: CalibrationMethod | str = CalibrationMethod.EM,
    out: Path | None = None,
    report: Path | None = None,
    abilities: Path | None = None,
    scoring: AbilityMethod | str = AbilityMethod.EAP,
    pool: Path | None = None,
    cross_fit: int | None = None,
    cross_fit_lengths: Sequence[int] = (100, 250),
    seed: int = 0,
    priors: bool = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    progress: FitProgress | None = None,
    cross_fit_progress: Callable[[str, float], None] | None = None,
) -> CalibrationOutcome:
    """Fit ``model`` to the response matrix in ``responses`` and write what is asked:
    item parameters to ``out``, abilities to ``abilities``, the fit report to ``report``,
    and into the pool folder ``pool`` its params.csv, reference.jsonl and the calibration's
    provenance in pool.json. ``cross_fit`` K (with ``pool``) replays each reference with
    the pool calibrated on the other K − 1 folds and stores the prediction errors that
    ``cat assess`` widens its interval by (``cross_fit_progress(what, fraction done)``
    follows its folds)."""
    model, method, scoring = ModelKind(model), CalibrationMethod(method), AbilityMethod(scoring)
    if out is None and pool is None:
        raise CatError("say where the parameters go: --out PARAMS.csv and/or --pool DIR")
    if pool is not None and not pool.is_dir():
        raise CatError(f"--pool {pool}: no such folder")
    if cross_fit is not None and pool is None:
        raise CatError("--cross-fit stores its errors in a pool: give --pool DIR")
    if cross_fit is not None and cross_fit < 2:
        raise CatError(f"--cross-fit needs at least 2 folds, got {cross_fit}")
    if not cross_fit_lengths or min(cross_fit_lengths) < 1:
        raise CatError(f"cross-fit lengths must be positive, got {list(cross_fit_lengths)}")
    check_output_folders(out, report, abilities)
    questions = None
    if pool is not None:
        questions = read_pool_questions(pool)  # refuse a broken pool before the fit
    matrix = read_responses(responses, id_column=id_column)
    notes = check_responses(matrix)
    result = fit_items(
        matrix,
        model,
        method,
        priors=None if priors else ItemPriors.none(),
        seed=seed,
        tol=tol,
        max_iter=max_iter,
        n_quad=quad_points,
        progress=progress,
    )
    fit_report = _report(responses, matrix, result, notes)
    written: list[Path] = []
    if out is not None:
        write_params(result.params, out)
        written.append(out)
    scores = None
    if abilities is not None or pool is not None:
        scores = score_abilities(matrix, result.params, scoring)
    if abilities is not None and scores is not None:
        write_abilities(scores, abilities)
        written.append(abilities)
    errors = None
    if pool is not None and scores is not None and questions is not None:
        if cross_fit is not None:
            errors = _cross_fit(
                questions.items,
                matrix,
                model,
                cross_fit,
                cross_fit_lengths,
                seed,
                cross_fit_progress,
            )
        provenance = _provenance(responses, matrix, result, scoring)
        rows = reference_rows(matrix, scores)
        record_calibration(
            pool,
            result.params,
            rows,
            provenance,
            None if errors is None else errors[DesignName.IRT].model_dump(),
            matrix,
            None if errors is None else {k: e.model_dump() for k, e in errors.items()},
            ReferenceModels.fit(matrix).low_rank,
        )
        written.extend(
            pool / name
            for name in ("params.csv", "reference.jsonl", REFERENCE_ANSWERS, LOW_RANK, "pool.json")
        )
    if report is not None:
        fit_report.write_json(report)
        written.append(report)
    return CalibrationOutcome(fit_report, result.params, errors, written)


def _cross_fit(
    items: Sequence[Any],
    matrix: ResponseMatrix,
    model: ModelKind,
    folds: int,
    lengths: Sequence[int],
    seed: int,
    progress: Callable[[str, float], None] | None,
) -> dict[str, PredictionErrors]:
    """The references' cross-fitted errors per design, the IRT design content-balanced
    when every item has a scenario in the pool (then with each design's errors per
    scenario)."""
    from cat.pools.scenarios import scenarios_of
    from cat.prediction.cross_fit import cross_fit_errors

    known = {item.id for item in items}
    scenario, names = None, None
    if all(item.scenario for item in items) and known.issuperset(matrix.item_ids):
        found = scenarios_of(items, matrix.item_ids)
        scenario, names = found.codes, found.names
    return cross_fit_errors(
        matrix, model, folds, list(lengths), seed, scenario, progress, scenario_names=names
    )


def _provenance(
    source: Path, matrix: ResponseMatrix, result: CalibrationResult, scoring: AbilityMethod
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
        "scoring": scoring.value,
        "source": source.name,
        "package_version": package_version(),
        "date": utc_now(),
        **result.settings,
    }


def _report(
    source: Path, matrix: ResponseMatrix, result: CalibrationResult, notes: list[str]
) -> CalibrationReport:
    observed = matrix.observed
    return CalibrationReport(
        model=result.model.value,
        method=result.method.value,
        n_subjects=matrix.n_subjects,
        n_items=matrix.n_items,
        n_responses=int(observed.sum()),
        missing_share=float(1 - observed.mean()),
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
        input=str(source),
        package_version=package_version(),
        created=utc_now(),
    )
