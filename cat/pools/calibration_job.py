"""``cat calibrate`` as one function: read responses, fit, score, write the parameters,
the abilities, the fit report and (into a pool) the references and their cross-fitted
prediction errors.

    outcome = calibrate("responses.jsonl", model="3pl", out="params.csv")
    outcome.report.loglik
    outcome.model_dump(mode="json")   # REPORT.json
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.designs.models import ReferenceModels
from cat.engine.registry import CRITERION_NAMES, CriterionName, DesignName
from cat.errors import CatError
from cat.pools.calibration import record_calibration, record_multidimensional, reference_rows
from cat.pools.loading import check_output_folders, pool_folder_problem, read_pool_questions
from cat.pools.mirt_calibration import (
    MultidimensionalFit,
    MultidimensionalModel,
    fit_multidimensional,
    information_criteria,
    n_parameters,
)
from cat.pools.report_keys import FitReportHead, value_stats
from cat.pools.scenarios import ItemScenarios, read_item_scenarios, scenarios_of
from cat.provenance import package_version, utc_now
from irt.checks import check_responses, warn_runaway_estimates
from irt.fit import CalibrationMethod, CalibrationResult, FitProgress, parameter_summary
from irt.fit import calibrate as fit_items
from irt.mirt_model import MirtParams, Structure
from irt.models import ItemParams, ModelKind
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from itempool import (
    LOW_RANK,
    MIRT_PARAMS,
    REFERENCE_ANSWERS,
    MultidimensionalEntry,
    PredictionErrors,
    QuestionSet,
)
from itempool.formats.mirt_params import write_mirt_params
from itempool.formats.params import write_abilities, write_params
from itempool.formats.responses import read_responses


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
class CalibrationOutcome:
    """What ``calibrate`` produced, and which files it wrote. Like every result of the
    API, ``model_dump(mode="json")`` is the file the command writes: here the fit
    report (REPORT.json, ``report``); the parameters are ``params`` (and ``mirt``)."""

    report: CalibrationReport
    params: ItemParams
    #: The multidimensional model, when one was asked for.
    mirt: MirtParams | None = None
    #: Per design (``cat.engine.registry.DESIGN_NAMES``), the references' errors.
    cross_fit: dict[str, PredictionErrors] | None = None
    written: list[Path] = field(default_factory=list)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """The fit report's dump, REPORT.json with ``mode="json"`` (``kwargs`` as
        pydantic's ``model_dump`` takes them)."""
        return self.report.model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        """The fit report as JSON text (pydantic's ``model_dump_json``)."""
        return self.report.model_dump_json(**kwargs)

    def write_json(self, path: PathArg) -> None:
        """Write the fit report to ``path``, as ``cat calibrate --report`` does."""
        self.report.write_json(check.as_path(path, "path"))


@api_errors
def calibrate(
    responses: PathArg,
    *,
    model: ModelKind | str = ModelKind.THREE_PL,
    method: CalibrationMethod | str = CalibrationMethod.EM,
    out: PathArg | None = None,
    report: PathArg | None = None,
    abilities: PathArg | None = None,
    scoring: AbilityMethod | str = AbilityMethod.EAP,
    pool: PathArg | None = None,
    cross_fit: int | None = None,
    cross_fit_lengths: Sequence[int] = (100, 250),
    seed: int = 0,
    priors: bool | ItemPriors = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    progress: FitProgress | None = None,
    cross_fit_progress: Callable[[str, float], None] | None = None,
    multidimensional: MultidimensionalModel | str | None = None,
    groups: PathArg | None = None,
    group_column: str = "scenario",
    guessing: bool = True,
    dims: int | None = None,
    criterion: CriterionName | str | None = None,
    cross_fit_fallback: bool = False,
) -> CalibrationOutcome:
    """Fit ``model`` to the response matrix in ``responses`` and write what is asked:
    item parameters to ``out``, abilities to ``abilities``, the fit report to ``report``,
    and into the pool folder ``pool`` its params.csv, reference.jsonl and the calibration's
    provenance in pool.json. ``cross_fit`` K (with ``pool``) replays each reference with
    the pool calibrated on the other K − 1 folds and stores the prediction errors that
    ``cat assess`` widens its interval by (``cross_fit_progress(what, fraction done)``
    follows its folds).

    ``multidimensional`` ("bifactor") fits that model as well, on the scenarios of
    ``groups`` (a questions file, its ``group_column``) or of the pool's items, and writes
    its items to ``out`` (``mirt_params.csv`` layout) and ``mirt_params.csv`` in the pool;
    ``model`` is then the unidimensional companion the pool keeps in ``params.csv``;
    "mirt" fits ``dims`` exploratory factors, or one correlated factor per group.
    ``criterion`` is how that model's design picks items in the cross-fit and, recorded
    in the pool, in ``cat assess`` (``cat.engine.registry.CriterionName``; the design's
    default when None). Paths may be str or ``os.PathLike``.

    ``priors``: True for the model's default priors (on for 3PL and 4PL), False for
    none (plain marginal ML), or the ``ItemPriors`` to fit under (``cat calibrate
    --priors``: ``ItemPriors()``). Estimates that ran off warn (``DataWarning``). With
    ``cross_fit_fallback`` (the folds are a default, not the user's), too few subjects
    for ``cross_fit`` folds give leave-one-out instead, said in a data note.

    Raises:
        CatError: unreadable responses, a setting out of range or of the wrong type (the
            message names the argument), an unknown name, or options that do not go
            together.
    """
    responses = check.as_path(responses, "responses")
    out = check.as_optional_path(out, "out")
    report = check.as_optional_path(report, "report")
    abilities = check.as_optional_path(abilities, "abilities")
    pool = check.as_optional_path(pool, "pool")
    groups = check.as_optional_path(groups, "groups")
    model = check.member(model, "model", ModelKind)
    method = check.member(method, "method", CalibrationMethod)
    scoring = check.member(scoring, "scoring", AbilityMethod)
    multi = None
    if multidimensional is not None:
        multi = check.member(multidimensional, "multidimensional", MultidimensionalModel)
    if cross_fit is not None:
        cross_fit = check.whole(cross_fit, "cross_fit", 2)
    if isinstance(cross_fit_lengths, str) or not isinstance(cross_fit_lengths, Iterable):
        raise CatError(f"cross_fit_lengths must be a list of lengths, got {cross_fit_lengths!r}")
    cross_fit_lengths = [check.whole(n, "cross_fit_lengths", 1) for n in cross_fit_lengths]
    seed = check.seed(seed)
    max_iter = check.whole(max_iter, "max_iter", 1)
    tol = check.number(tol, "tol", above=0)
    quad_points = check.whole(quad_points, "quad_points", 5)
    if dims is not None:
        dims = check.whole(dims, "dims", 1)
    given_priors = priors if isinstance(priors, ItemPriors) else None
    priors = True if given_priors is not None else check.flag(priors, "priors")
    id_column = check.flag(id_column, "id_column")
    guessing = check.flag(guessing, "guessing")
    progress = check.callback(progress, "progress")
    cross_fit_progress = check.callback(cross_fit_progress, "cross_fit_progress")
    if multi is None and groups is not None:
        raise CatError("--groups names the specific factors of --model bifactor; give that model")
    if multi is None and dims is not None:
        raise CatError("--dims is the number of factors of --model mirt; give that model")
    if criterion is not None and (multi is None or dims is not None):
        raise CatError(
            "--criterion is how the bifactor or mirt design picks items: give --model "
            "bifactor, or mirt with one factor per scenario"
        )
    if criterion is not None:
        criterion = check.name(criterion, "criterion", CRITERION_NAMES)
    if dims is not None and groups is not None:
        raise CatError("--model mirt takes --dims K (exploratory) or --groups (one factor each)")
    if out is None and pool is None:
        raise CatError("say where the parameters go: --out PARAMS.csv and/or --pool DIR")
    if pool is not None and (missing := pool_folder_problem(pool)) is not None:
        raise CatError(f"--pool {pool}: {missing}")
    if cross_fit is not None and pool is None:
        raise CatError("--cross-fit stores its errors in a pool: give --pool DIR")
    if not cross_fit_lengths:
        raise CatError("give at least one cross-fit length")
    check_output_folders(out, report, abilities)
    questions = None
    if pool is not None:
        questions = read_pool_questions(pool)  # refuse a broken pool before the fit
    matrix = read_responses(responses, id_column=id_column)
    notes = check_responses(matrix)
    if cross_fit is not None:
        from cat.prediction.cross_fit import fold_count

        cross_fit, fold_note = fold_count(matrix.n_subjects, cross_fit, not cross_fit_fallback)
        notes += [fold_note] if fold_note else []
    item_groups = None
    if multi is not None and (multi is MultidimensionalModel.BIFACTOR or dims is None):
        item_groups = _item_groups(matrix, groups, group_column, questions)
    result = fit_items(
        matrix,
        model,
        method,
        priors=given_priors or (None if priors else ItemPriors.none()),
        seed=seed,
        tol=tol,
        max_iter=max_iter,
        n_quad=quad_points,
        progress=progress,
    )
    # Under a prior on b an estimate that ran off has no more to go on than the prior.
    remedy = (
        "more subjects answering them would place them"
        if result.priors.has_b
        else "fit with priors on a and b (cat calibrate --priors), or on more subjects"
    )
    warn_runaway_estimates(result.params, remedy)
    fit_report = _report(responses, matrix, result, notes)
    mirt_fit = None
    if multi is not None:
        if progress is not None:
            progress(1.0, f"fitting the {multi.value} model")
        mirt_fit = fit_multidimensional(
            matrix,
            multi,
            item_groups,
            guessing,
            priors,
            tol=tol,
            max_iter=max_iter,
            dims=dims,
            unidimensional=result.params,
            unidimensional_priors=result.priors.describe(),
        )
        fit_report = _multidimensional_report(fit_report, multi, mirt_fit, matrix.n_subjects)
    written: list[Path] = []
    if out is not None:
        if mirt_fit is not None:
            write_mirt_params(mirt_fit.params, out)
        else:
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
                item_groups,
                multi.value if multi is not None and dims is None else None,
                guessing,
                criterion,
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
        if mirt_fit is not None:
            entry = MultidimensionalEntry.of(
                mirt_fit.params, _mirt_figures(fit_report), mirt_fit.offset, criterion
            )
            record_multidimensional(pool, mirt_fit.params, entry.model_dump(mode="json"))
            written.append(pool / MIRT_PARAMS)
    if report is not None:
        fit_report.write_json(report)
        written.append(report)
    mirt = None if mirt_fit is None else mirt_fit.params
    return CalibrationOutcome(fit_report, result.params, mirt, errors, written)


def _item_groups(
    matrix: ResponseMatrix, groups: Path | None, column: str, questions: QuestionSet | None
) -> ItemScenarios | None:
    """Each item's scenario from ``groups`` or else from the pool's items."""
    if groups is not None:
        return read_item_scenarios(groups, tuple(matrix.item_ids), column)
    if questions is None:
        return None
    known = {item.id for item in questions.items}
    missing = [i for i in matrix.item_ids if i not in known]
    if missing:
        raise CatError(f"{len(missing)} answered item(s) are not in the pool (e.g. {missing[0]})")
    return scenarios_of(questions.items, matrix.item_ids)


def _multidimensional_report(
    uni: CalibrationReport, multi: MultidimensionalModel, fit: MultidimensionalFit, n: int
) -> CalibrationReport:
    """The report of the multidimensional fit, the unidimensional one beside it."""
    companion = {
        "model": uni.model,
        "loglik": uni.loglik,
        "n_parameters": uni.n_parameters,
        "aic": uni.aic,
        "bic": uni.bic,
        "converged": uni.converged,
        "seconds": uni.seconds,
    }
    params = fit.params
    if params.structure is Structure.BIFACTOR:
        loaded = params.pattern[:, 1:].any(axis=1)
        summary = {
            "a_general": params.slopes[:, 0],
            "a_specific": params.slopes[loaded, 1:].sum(axis=1),
        }
    else:
        summary = {"a (free slopes)": params.slopes[params.pattern]}
    summary["d"] = params.d
    if fit.params.c is not None:
        summary["c"] = fit.params.c
    return uni.model_copy(
        update={
            "model": multi.value,
            "method": fit.method,
            "loglik": fit.loglik,
            "logpost": fit.logpost,
            "n_iter": fit.n_iter,
            "converged": fit.converged,
            "seconds": round(uni.seconds + fit.seconds, 4),
            "priors": fit.priors,
            "settings": {**fit.settings, "guessing": fit.params.guessing},
            "parameters": {name: value_stats(values) for name, values in summary.items()},
            "n_parameters": fit.n_parameters,
            **fit.criteria(n),
            "factors": list(fit.params.factors),
            "unidimensional": companion,
        }
    )


def _mirt_figures(report: CalibrationReport) -> dict[str, Any]:
    return {
        "model": report.model,
        "loglik": report.loglik,
        "n_parameters": report.n_parameters,
        "aic": report.aic,
        "bic": report.bic,
        "converged": report.converged,
        "n_iter": report.n_iter,
        "priors": report.priors,
        "unidimensional": report.unidimensional,
        "date": report.created,
        "package_version": report.package_version,
    }


def _cross_fit(
    items: Sequence[Any],
    matrix: ResponseMatrix,
    model: ModelKind,
    folds: int,
    lengths: Sequence[int],
    seed: int,
    progress: Callable[[str, float], None] | None,
    groups: ItemScenarios | None = None,
    multidimensional: str | None = None,
    guessing: bool = True,
    criterion: str | None = None,
) -> dict[str, PredictionErrors]:
    """The references' cross-fitted errors per design, the IRT design content-balanced
    when every item has a scenario in the pool (then with each design's errors per
    scenario). With a ``multidimensional`` model ("bifactor" or "mirt") and its
    ``groups``, that model's design too, and those groups are the scenarios."""
    from cat.prediction.cross_fit import cross_fit_errors

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
        list(lengths),
        seed,
        scenario,
        progress,
        scenario_names=names,
        multidimensional=multidimensional,
        guessing=guessing,
        criterion=criterion,
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
    k = n_parameters(result.model, matrix.n_items)
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
        n_parameters=k,
        **information_criteria(result.loglik, k, matrix.n_subjects),
    )
