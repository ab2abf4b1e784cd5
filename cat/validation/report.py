"""Replay validation as one job with a typed result: what ``cat validate`` runs and writes.

``validate`` reads the data, runs ``cat.prediction.validation.validate`` (the engine
of it) and gathers its figures into a ``ValidationReport``, whose
``model_dump(mode="json")`` is the VALID.json file key for key; scripts read it, so
keys are only ever added, never renamed or removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.engine.registry import (
    CRITERION_NAMES,
    DEFAULT,
    MULTIDIMENSIONAL_DESIGNS,
    CriterionName,
    default_selection,
)
from cat.errors import CatError
from cat.pools.scenarios import read_item_scenarios
from cat.prediction import validation
from cat.prediction.draw_metrics import across_draws
from cat.prediction.draws import validate_draws
from cat.prediction.predictions import holds
from cat.prediction.validation import Predictions, Progress
from cat.prediction.validation_checks import answered_subjects, refuse_nan
from cat.prediction.verdicts import ValidationRow, Verdict, verdicts
from cat.provenance import package_version, utc_now
from irt.errors import IRTError
from irt.estimation.threads import blas_threads_for, cells_of
from irt.models import ModelKind
from irt.names import ModelGroup, model_named
from irt.responses import ResponseMatrix
from itempool.formats.responses import read_responses

__all__ = [
    "SubjectPredictions",
    "ValidationReport",
    "ValidationRow",
    "ValidationSettings",
    "Verdict",
    "validate",
]

#: How the intervals and the predictors are made, as the settings record it.
INTERVAL = (
    "90%: prediction ± the split-conformal half-width of training subjects' errors only, "
    "cross-fitted at the same policy, length and predictor (--holdout: the training "
    "subjects in K folds, calibrate on K-1, replay the other; --leave-one-out, --folds: K+1 "
    "random blocks of subjects, each held-out subject's from the other K blocks, one "
    "calibration per pair of blocks; no subject's answers enter its own interval); "
    "irt: the theta-only interval widened to that half-width, as cat assess widens it; "
    "default: that of the design it takes; theta-only (plug-in rows): from "
    "theta's SE and the unseen answers' chance; "
    "random-raw: its binomial sampling interval"
)
#: The same for scores 0..m (cat.prediction.scored_validation).
SCORED_INTERVAL = (
    "90%: prediction ± the split-conformal half-width of training subjects' errors only, "
    "cross-fitted (in K folds of each split's training subjects) at the same policy and "
    "length; default: the theta-only interval widened to that half-width, as cat assess "
    "widens it; random-raw: its sampling interval"
)
SCORED_PREDICTORS = (
    "plug-in: the scores given + the expected share of each other item's top score at "
    "the ML theta, less the drift the training subjects show; default: what cat assess "
    "runs on a scored pool (the irt design: selection per default_policy, ML theta, the "
    "plug-in); the truth is the mean share of the top score over every item answered"
)
PREDICTORS = (
    "plug-in: answers given + IRT-expected score on the rest, less the "
    "drift the training subjects show at their ML abilities; ridge: answers given + "
    "ridge across the training subjects (penalty by exact LOO); mixture: answers given + "
    "the training subjects' number right on the rest, weighted by how well each matches "
    "the answers (epsilon 0.25); low-rank: answers given + expected score on the rest "
    "under a K-factor logistic model of the training subjects (K = about one per 30 of "
    "them, 1 to 8), the subject's factors by MAP; bifactor, mirt (with that --model): "
    "answers given + expected score on the rest under that multidimensional model, the "
    "subject's factors by MAP; chosen: whichever predictor erred "
    "least in the cross-fit inside the training subjects; designs (policies scored by "
    "their own predictor): irt (selection per default_policy, ML theta, the plug-in), "
    "mixture (expected variance reduction), low-rank (predictive variance reduction), "
    "bifactor and mirt (by their criterion); "
    "default: what cat assess runs with no options on a cross-fitted pool, per held-out "
    "block the design of smallest training-only error"
)


class ValidationSettings(BaseModel):
    """Every setting of the run, the seed included."""

    model_config = ConfigDict(extra="forbid")

    responses: str | None = Field(description="The response file, or None for data in memory.")
    model: ModelKind | str = Field(
        description="The IRT model: 1pl..4pl, or a model for scores 0..m (graded, gpcm, "
        "sequential, nominal, or an item family registered from outside the package)."
    )
    policies: list[str] = Field(description='As asked; "random" is run whether named or not.')
    # None in files written before these settings existed.
    default_policy: str | None = Field(
        None, description='The selection of the "default" policy here.'
    )
    repeats: int | None = Field(None, description="Draws of the random rows.")
    interval_folds: int | None = Field(None, description="K of the cross-fit behind the intervals.")
    lengths: list[int]
    holdout: float | None = Field(description="None with leave-one-out, folds or train_size.")
    leave_one_out: bool
    folds: int | None = Field(
        None, description="K random folds held out in turn (None: holdout or leave-one-out)."
    )
    train_size: int | None = Field(
        None,
        description="K random training subjects, every other subject held out (None: "
        "holdout, folds or leave-one-out).",
    )
    splits: int | None = Field(
        None,
        description="Random draws of the train_size training subjects; each figure is "
        "the mean over them, its _sd key the sd (None without train_size).",
    )
    seed: int
    scenarios: list[str] | None = Field(description="Scenario names, when given.")
    multidimensional: str | None = Field(
        None, description='"bifactor" or "mirt" when its design was replayed beside the others.'
    )
    criterion: str | None = Field(
        None, description="How the multidimensional design picked items (its default: None)."
    )
    estimator: str = "mle"
    interval: str = INTERVAL
    predictors: str = PREDICTORS
    n_subjects: int = Field(description="Subjects in the response matrix, held out or not.")
    n_items: int
    package_version: str

    @field_validator("model", mode="before")
    @classmethod
    def _logistic_as_kind(cls, value: object) -> object:
        # The four logistic models read back as ``ModelKind``, as they were written.
        if isinstance(value, str) and value.lower() in set(ModelKind):
            return ModelKind(value)
        return value


class SubjectPredictions(BaseModel):
    """One held-out subject: its true accuracy and each mean prediction, keyed
    "policy/predictor@length". In the file the predictions sit beside ``subject_id``
    and ``truth``, not nested; ``intervals`` (each row's 90% interval [low, high]) and
    ``covered`` (the share of the row's repeats whose interval held the truth: 0 or 1
    for a row without repeats) are nested under their own keys, so that coverage can be
    recomputed for any group of subjects."""

    model_config = ConfigDict(extra="forbid")

    subject_id: str
    truth: float = Field(description="Accuracy on every item the subject answered.")
    predicted: dict[str, float]
    intervals: dict[str, list[float]] = Field(
        default_factory=dict,
        description="Per row, the 90% interval [low, high] (means over the row's repeats).",
    )
    covered: dict[str, float] = Field(
        default_factory=dict,
        description="Per row, the share of its repeats whose 90% interval held the truth.",
    )

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        """Read the file's flat form: every key but the id, the truth, the intervals
        and the coverage is a prediction."""
        if isinstance(data, dict) and "predicted" not in data:
            rest = dict(data)
            fixed = {
                key: rest.pop(key)
                for key in ("subject_id", "truth", "intervals", "covered")
                if key in rest
            }
            return {**fixed, "predicted": rest}
        return data

    @model_serializer(mode="wrap")
    def _flatten(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        flat = {"subject_id": data["subject_id"], "truth": data["truth"], **data["predicted"]}
        for key in ("intervals", "covered"):
            if data[key]:
                flat[key] = data[key]
        return flat


class ValidationReport(BaseModel):
    """Replay validation: figures per policy, predictor and length; the settings; and
    each held-out subject's predictions."""

    model_config = ConfigDict(extra="forbid")

    results: list[ValidationRow]
    verdicts: list[Verdict] = Field(
        default_factory=list,
        description="Per length, the default against the best random row (when run).",
    )
    settings: ValidationSettings
    subjects: list[SubjectPredictions]
    created: str = Field(description="UTC time of the run, ISO 8601.")
    data_notes: list[str] = Field(
        default_factory=list,
        description="What was done to the data (subjects that answered no item are left "
        "out), as cat calibrate's report words it.",
    )


@api_errors
def validate(
    responses: ResponseMatrix | PathArg,
    *,
    lengths: Sequence[int] = (30, 100, 250),
    policies: Sequence[str] | str = (DEFAULT,),
    model: ModelKind | str = ModelKind.THREE_PL,
    holdout: float | None = None,
    leave_one_out: bool = False,
    seed: int = 0,
    id_column: bool = True,
    scenarios: PathArg | None = None,
    folds: int | None = None,
    scenario_column: str = "scenario",
    progress: Progress | None = None,
    repeats: int = 5,
    interval_folds: int = 5,
    criterion: CriterionName | str | None = None,
    train_size: int | None = None,
    splits: int = 1,
) -> ValidationReport:
    """Calibrate ``model`` on some subjects of ``responses`` (a matrix, or a .jsonl or
    wide .csv file; ``id_column`` says whether a CSV's first column holds subject ids),
    replay the others' recorded answers through adaptive tests of each of ``lengths``
    under each of ``policies``, and compare the predicted full-pool accuracy with their
    accuracy on every item they answered.

    ``holdout`` is the share of subjects held out (0.3 when None), unless
    ``leave_one_out`` holds out each in turn. ``train_size`` K instead trains on K random
    subjects and holds out the rest, ``splits`` times over (draws seeded from ``seed``);
    each figure is then the mean over the draws and its ``_sd`` key the sd
    (``cat.prediction.draws``). ``scenarios`` (an item table: CSV with the item id first, or JSONL
    with "id") gives each item's ``scenario_column``, which policies named like
    "mfi+cb" balance; "default" is what ``cat assess`` runs with no options. Random
    items scored by every predictor ("random", ``repeats`` draws, mean and sd) and
    "random-raw" (plain accuracy on random items) are always reported as the baselines,
    and ``verdicts`` say per length whether the default beats the best of them.
    Intervals come from the training subjects only, cross-fitted in ``interval_folds``
    folds. ``progress`` is told what is being done and the fraction done. ``model``
    "bifactor" or "mirt" calibrates the 3PL and, with a specific (bifactor) or correlated
    (mirt) factor per scenario, that model, whose design is replayed beside the others
    and chosen by the default where its training-only errors are smallest. ``folds`` K
    holds out K random folds in turn instead of ``holdout``. ``criterion`` is how that
    design picks items (``cat.engine.registry.CriterionName``; its default when None).

    Raises:
        CatError: unreadable data, an unknown model or policy, a setting of the wrong
            type or out of range (the message names the argument), or settings that
            leave too few subjects on either side.
    """
    if not isinstance(responses, ResponseMatrix):
        responses = check.as_path(responses, "responses")
    scenarios = check.as_optional_path(scenarios, "scenarios")
    lengths = _lengths(lengths)
    if isinstance(policies, str):
        policies = [policies]
    if not isinstance(policies, Iterable) or not all(isinstance(p, str) for p in policies):
        raise CatError(f"policies must be a list of policy names, got {policies!r}")
    policies = list(policies)
    progress = check.callback(progress, "progress")
    splits = check.whole(splits, "--splits", 1)
    if train_size is not None:
        # Its range (at least MIN_TRAIN_SIZE, 3 held out) is checked with the data.
        train_size = check.whole(train_size, "--train-size")
        _alone(train_size, holdout=holdout, leave_one_out=leave_one_out, folds=folds)
    elif splits > 1:
        raise CatError(
            "--splits are draws of the --train-size training subjects: give --train-size"
        )
    holdout = check.number(0.3 if holdout is None else holdout, "holdout")
    leave_one_out = check.flag(leave_one_out, "leave_one_out")
    seed = check.seed(seed)
    id_column = check.flag(id_column, "id_column")
    if folds is not None:
        folds = check.whole(folds, "folds", 2)
    repeats = check.whole(repeats, "repeats", 1)
    interval_folds = check.whole(interval_folds, "interval_folds", 2)
    if criterion is not None:
        criterion = check.name(criterion, "criterion", CRITERION_NAMES)
    name = str(model).lower()
    multidimensional = name if name in MULTIDIMENSIONAL_DESIGNS else None
    kind = ModelKind.THREE_PL if multidimensional else _model_kind(model)
    if multidimensional and scenarios is None:
        raise CatError(
            f"--model {multidimensional} needs each item's scenario: give --scenarios ITEMS"
        )
    matrix, source = _load(responses, id_column)
    matrix, notes = answered_subjects(matrix)
    item_scenarios = (
        None
        if scenarios is None
        else read_item_scenarios(scenarios, matrix.item_ids, scenario_column)
    )
    options: dict[str, Any] = dict(
        scenario=None if item_scenarios is None else item_scenarios.codes,
        repeats=repeats,
        interval_folds=interval_folds,
        multidimensional=multidimensional,
        criterion=criterion,
    )
    # The replay's products are those of fits on this matrix: as many BLAS threads as
    # a fit on it would take (irt.estimation.threads).
    with blas_threads_for(cells_of(matrix)):
        if train_size is not None:
            draws = validate_draws(
                matrix,
                kind,
                list(policies),
                list(lengths),
                seed,
                train_size,
                splits,
                progress,
                **options,
            )
            metrics = across_draws(draws)
            predictions = [p for draw in draws for p in draw]
        else:
            predictions = validation.validate(
                matrix,
                kind,
                list(policies),
                list(lengths),
                np.random.default_rng(seed),
                holdout=None if leave_one_out or folds else holdout,
                leave_one_out=leave_one_out,
                progress=progress,
                folds=folds,
                **options,
            )
            metrics = [p.metrics() for p in predictions]
    settings = ValidationSettings(
        responses=source,
        model=kind,
        policies=list(policies),
        default_policy=default_selection(None if item_scenarios is None else item_scenarios.codes),
        repeats=repeats,
        interval_folds=interval_folds,
        lengths=list(lengths),
        holdout=None if leave_one_out or folds or train_size else holdout,
        leave_one_out=leave_one_out,
        folds=folds,
        train_size=train_size,
        splits=None if train_size is None else splits,
        seed=seed,
        scenarios=None if item_scenarios is None else list(item_scenarios.names),
        multidimensional=multidimensional,
        criterion=criterion,
        n_subjects=matrix.n_subjects,
        n_items=matrix.n_items,
        package_version=package_version(),
    )
    return _report(predictions, settings, matrix.subject_ids, notes, metrics)


def _alone(train_size: int, **others: object) -> None:
    """``CatError`` if ``train_size`` comes with another way to split the subjects."""
    given = [f"--{name.replace('_', '-')}" for name, v in others.items() if v not in (None, False)]
    if given:
        raise CatError(
            f"--train-size {train_size} chooses the held-out subjects itself: drop "
            f"{' and '.join(given)}"
        )


def _report(
    predictions: list[Predictions],
    settings: ValidationSettings,
    ids: tuple[str, ...],
    notes: list[str] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> ValidationReport:
    """The report of ``predictions``: a row each (from ``metrics`` when given: the rows of
    several draws, ``cat.prediction.draw_metrics``), the verdicts, every held-out
    subject; ``CatError`` rather than a NaN figure in it
    (``validation_checks.refuse_nan``)."""
    if metrics is None:
        metrics = [p.metrics() for p in predictions]
    rows = [ValidationRow.model_validate(m) for m in metrics]
    subjects = _subjects(predictions, ids)
    for row in rows:
        refuse_nan(row, f"{row.policy}/{row.predictor} at {row.length} items")
    for subject in subjects:
        refuse_nan(subject, f"held-out subject {subject.subject_id}")
    return ValidationReport(
        results=rows,
        verdicts=verdicts(rows),
        settings=settings,
        subjects=subjects,
        created=utc_now(),
        data_notes=notes or [],
    )


def _lengths(lengths: object) -> list[int]:
    """The test lengths asked for: whole numbers, each at least 1."""
    if isinstance(lengths, str) or not isinstance(lengths, Iterable):
        raise CatError(f"lengths must be a list of test lengths, got {lengths!r}")
    return [check.whole(n, "lengths", 1) for n in lengths]


def _model_kind(model: ModelKind | str) -> ModelKind:
    try:
        return ModelKind(model)
    except ValueError as exc:
        choices = ", ".join(kind.value for kind in ModelKind)
        raise CatError(f"unknown IRT model {model!r}; choose from {choices}") from exc


def _load(
    responses: ResponseMatrix | str | Path, id_column: bool
) -> tuple[ResponseMatrix, str | None]:
    """The matrix, and the file it came from (None if given in memory)."""
    if isinstance(responses, ResponseMatrix):
        return responses, None
    try:
        return read_responses(responses, id_column=id_column), str(responses)
    except IRTError as exc:
        raise CatError(str(exc)) from exc


def _subjects(predictions: list[Predictions], ids: tuple[str, ...]) -> list[SubjectPredictions]:
    """Per held-out subject (in matrix order), each prediction averaged over repeats (and
    over the draws that held the subject out, with several)."""
    rows: dict[int, SubjectPredictions] = {}
    # Per (subject, row): each draw's mean prediction, low, high and share covered.
    sums: dict[tuple[int, str], list[tuple[float, float, float, float]]] = {}
    for p in predictions:
        for k, row in enumerate(p.subject):
            entry = rows.setdefault(
                int(row),
                SubjectPredictions(subject_id=ids[row], truth=float(p.truth[k]), predicted={}),
            )
            name = f"{p.policy}/{p.predictor}@{p.length}"
            low, high, truth = p.low[:, k], p.high[:, k], float(p.truth[k])
            inside = holds(low, high, truth)
            draw = (
                float(p.predicted[:, k].mean()),
                float(low.mean()),
                float(high.mean()),
                float(inside.mean()),
            )
            sums.setdefault((int(row), name), []).append(draw)
            mean = np.mean(sums[(int(row), name)], axis=0)
            entry.predicted[name] = float(mean[0])
            entry.intervals[name] = [float(mean[1]), float(mean[2])]
            entry.covered[name] = float(mean[3])
    return [rows[r] for r in sorted(rows)]


def validate_scored_responses(
    responses: str | Path,
    *,
    model: str = "graded",
    lengths: Sequence[int] = (30, 100, 250),
    policies: Sequence[str] = (DEFAULT,),
    holdout: float = 0.3,
    leave_one_out: bool = False,
    folds: int | None = None,
    seed: int = 0,
    id_column: bool = True,
    scenarios: str | Path | None = None,
    scenario_column: str = "scenario",
    progress: Progress | None = None,
    repeats: int = 5,
    interval_folds: int = 5,
) -> ValidationReport:
    """``validate`` on scores 0..m (``itempool.formats.responses.read_scored_responses``):
    every item with 3+ scores is fitted by ``model`` ("graded", "gpcm", "sequential" or
    "nominal"), a 0/1 item by the 2PL, and the held-out subjects are replayed as
    ``cat.prediction.scored_validation`` describes. The report has the same keys."""
    from cat.pools.graded_calibration import GRADED_MODELS, item_types_for
    from cat.prediction.scored_validation import validate_scored
    from irt.polytomous import ItemType
    from itempool.formats.responses import read_scored_responses

    if seed < 0:
        raise CatError(f"the seed must be a non-negative whole number, got {seed}")
    try:
        named = model_named(model)
    except IRTError:
        named = None
    if named is None or named.group is not ModelGroup.GRADED:
        raise CatError(f"unknown graded model {model!r}; choose from {', '.join(GRADED_MODELS)}")
    model = named.name
    try:
        data = read_scored_responses(responses, id_column=id_column)
    except IRTError as exc:
        raise CatError(str(exc)) from exc
    data, notes = answered_subjects(data)
    types = dict(zip(data.item_ids, item_types_for(data, ItemType(model), False), strict=True))
    item_scenarios = (
        None
        if scenarios is None
        else read_item_scenarios(scenarios, data.item_ids, scenario_column)
    )
    codes = None if item_scenarios is None else item_scenarios.codes
    predictions = validate_scored(
        data,
        types,
        list(policies),
        list(lengths),
        np.random.default_rng(seed),
        holdout=None if leave_one_out or folds else holdout,
        leave_one_out=leave_one_out,
        folds=folds,
        scenario=codes,
        repeats=repeats,
        interval_folds=interval_folds,
        progress=progress,
    )
    settings = ValidationSettings(
        responses=str(responses),
        model=model,  # a model for scores 0..m, checked above
        policies=list(policies),
        default_policy=default_selection(codes),
        repeats=repeats,
        interval_folds=interval_folds,
        lengths=list(lengths),
        holdout=None if leave_one_out or folds else holdout,
        leave_one_out=leave_one_out,
        folds=folds,
        seed=seed,
        scenarios=None if item_scenarios is None else list(item_scenarios.names),
        estimator="mle",
        interval=SCORED_INTERVAL,
        predictors=SCORED_PREDICTORS,
        n_subjects=data.n_subjects,
        n_items=data.n_items,
        package_version=package_version(),
    )
    return _report(predictions, settings, data.subject_ids, notes)
