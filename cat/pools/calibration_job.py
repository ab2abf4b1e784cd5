"""``cat calibrate`` as one function, for every model: check the request, read the
responses, fit, and write what is asked (the parameters, the abilities, the fit report,
and into a pool the references and their cross-fitted prediction errors). The steps are
the same for every model; what one does for a family of models is that family's own
function in the registry (``cat.pools.calibration_registry``).

    outcome = calibrate("responses.jsonl", model="3pl", out="params.csv")
    outcome.report.loglik
    outcome.model_dump(mode="json")   # REPORT.json

Without ``out``, ``pool``, ``report`` or ``abilities`` nothing is written: the fitted
parameters and abilities are the outcome's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.engine.registry import CriterionName
from cat.errors import CatError
from cat.pools.binary_calibration import BINARY, CalibrationReport
from cat.pools.calibration_registry import (
    family_of,
    is_mixed,
    takes_continuous,
    with_continuous,
)
from cat.pools.calibration_steps import CalibratedParams, CalibrationRequest, Family, Priors
from cat.pools.continuous_calibration import ContinuousCalibrationReport
from cat.pools.graded_calibration import GRADED
from cat.pools.graded_report import GradedCalibrationReport
from cat.pools.loading import check_output_folders, read_pool_questions
from cat.pools.mixed_report import MixedCalibrationReport
from irt.continuous_kernels import DEFAULT_EPSILON
from irt.continuous_responses import ContinuousResponses
from irt.errors import IRTError
from irt.estimation.devices import resolve_device
from irt.estimation.methods import FitProgress
from irt.mirt_model import MirtParams
from irt.mixed import MixedResponses
from irt.names import AbilityMethod, CalibrationMethod
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import Abilities
from itempool import PoolFormatError, PoolProtocol, PredictionErrors
from itempool.formats.params import write_abilities
from itempool.protocol_bundle import bundle_beside, install_protocol, read_bundle

__all__ = ["CalibrationOutcome", "CalibrationReport", "calibrate"]

#: Folds of the cross-fit a pool's calibration runs unless told otherwise
#: (``cat calibrate --pool``, ``cat pool create``).
DEFAULT_CROSS_FIT_FOLDS = 5

#: Responses as ``calibrate`` takes them: a file, or the data in memory.
Responses = PathArg | ResponseMatrix | PolytomousResponses | ContinuousResponses | MixedResponses
#: The fit report of each family (REPORT.json).
FitReport = (
    CalibrationReport
    | GradedCalibrationReport
    | ContinuousCalibrationReport
    | MixedCalibrationReport
)


@dataclass(frozen=True)
class CalibrationOutcome:
    """What ``calibrate`` produced, and which files it wrote. Like every result of the
    API, ``model_dump(mode="json")`` is the file the command writes: here the fit
    report (REPORT.json, ``report``). The rest is held in memory only: the fitted
    ``params``, the multidimensional model ``mirt`` beside them, the subjects'
    ``abilities``, the references' cross-fitted errors per design."""

    report: FitReport
    params: CalibratedParams
    #: The multidimensional model, when one was asked for (``params`` is then the 3PL).
    mirt: MirtParams | None = None
    #: Per design (``cat.engine.registry.DESIGN_NAMES``), the references' errors.
    cross_fit: dict[str, PredictionErrors] | None = None
    written: list[Path] = field(default_factory=list)
    #: Each subject's θ and its standard error (the columns of ``--abilities``).
    abilities: Abilities | None = None
    #: The family that fitted it ("binary", "multidimensional", "graded",
    #: "continuous", "mixed"; ``cat.pools.calibration_registry``).
    family: str = "binary"
    #: The protocol given to the pool (``itempool.protocol_bundle``: the one ``cat
    #: synth`` wrote beside the responses), and where it came from; None: none given.
    protocol: PoolProtocol | None = None
    protocol_source: Path | None = None

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
    responses: Responses,
    *,
    model: str = "3pl",
    method: CalibrationMethod | str = CalibrationMethod.EM,
    out: PathArg | None = None,
    report: PathArg | None = None,
    abilities: PathArg | None = None,
    scoring: AbilityMethod | str = AbilityMethod.EAP,
    pool: PathArg | None = None,
    cross_fit: int | None = None,
    cross_fit_lengths: Sequence[int] = (100, 250),
    seed: int = 0,
    priors: Priors = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    progress: FitProgress | None = None,
    cross_fit_progress: Callable[[str, float], None] | None = None,
    groups: PathArg | Mapping[str, str] | None = None,
    group_column: str = "scenario",
    guessing: bool | None = None,
    dims: int | None = None,
    criterion: CriterionName | str | None = None,
    cross_fit_fallback: bool = False,
    standard_errors: str = "auto",
    collapse_scores: bool = False,
    item_types: Mapping[str, str] | None = None,
    continuous: PathArg | ContinuousResponses | None = None,
    continuous_model: str = "auto",
    continuous_out: PathArg | None = None,
    epsilon: float = DEFAULT_EPSILON,
    score_subjects: bool = True,
    device: str = "cpu",
) -> CalibrationOutcome:
    """Fit ``model`` to ``responses`` (a response file, or the data in memory) and
    write what is asked: item parameters to ``out``, abilities to ``abilities``, the fit
    report to ``report``, and into the pool folder ``pool`` its params.csv,
    reference.jsonl and the calibration's provenance in pool.json. With none of them,
    nothing is written: the outcome holds the fit (``params``, ``abilities``,
    ``report``).

    ``model`` is any of ``cat calibrate --model``:

    - "1pl".."4pl" for 0/1 answers (a file of ``itempool.formats.responses``, or a
      ``ResponseMatrix``), by ``method`` "em" or "bayes"; ``scoring`` any ability
      estimator. ``priors``: True for the model's defaults (on for 3PL and 4PL), False
      for none (plain marginal ML), "all" for every prior the model has a parameter
      for (``cat calibrate --priors``), or the ``ItemPriors`` to fit under.
    - "bifactor" and "mirt" fit that model beside the 3PL (``params``), on the
      scenarios of ``groups`` (a questions file, its ``group_column``; or item id ->
      scenario) or of the pool's items, and write its items to ``out``
      (``mirt_params.csv`` layout) and ``mirt_params.csv`` in the pool (``mirt``);
      "mirt" fits ``dims`` exploratory factors, or one correlated factor per group.
      ``guessing`` (default True): a lower asymptote per item. ``criterion`` is how
      that model's design picks items in the cross-fit and, recorded in the pool, in
      ``cat assess``.
    - "graded", "gpcm", "sequential" and "nominal" for scores 0..m (a ``PolytomousResponses``):
      items with two categories are 2PL, or 3PL with ``guessing``; ``item_types`` (item
      id -> type) overrides that; ``collapse_scores`` renumbers each item's observed
      scores 0..K−1 as R mirt does; ``standard_errors`` "auto", "oakes", "xpd" or
      "none"; ``scoring`` "eap" or "map"; ``priors`` as above, or a
      ``PolytomousPriors``. With ``continuous`` scores in [0, 1] beside (a file or a
      ``ContinuousResponses``; or ``responses`` a ``MixedResponses``, or a pool with
      continuous items) both are fitted on one θ, the continuous items by
      ``continuous_model`` ("crm", "beta" or "auto": the lower AIC), their parameters
      written to ``continuous_out``.
    - "crm" and "beta" for scores in [0, 1] (a ``ContinuousResponses``), clipped to
      [``epsilon``, 1 − ``epsilon``]; not into a pool.

    ``cross_fit`` K (with ``pool``) replays each reference with the pool calibrated on
    the other K − 1 folds and stores the prediction errors that ``cat assess`` widens
    its interval by (``cross_fit_progress(what, fraction done)`` follows its folds);
    with ``cross_fit_fallback`` (the folds are a default, not the user's), too few
    subjects for ``cross_fit`` folds give leave-one-out instead, said in a data note.
    ``progress(fraction done, what)`` follows the fit. ``score_subjects``: False
    leaves the outcome's ``abilities`` None unless ``abilities`` or ``pool`` needs them
    (``cat calibrate`` does: on a leaderboard-sized matrix scoring every subject
    costs about as much as the fit). ``device`` is where the EM cycles of a 1PL-4PL,
    graded, gpcm, sequential or nominal fit run (``cat calibrate --device``): "cpu"
    (numpy), "cuda" or "cuda:K" (torch on a GPU), "auto" (a GPU when torch sees one,
    else the cpu; other models then run on the cpu) or "torch:cpu" (the torch path on
    the processors, for testing); the report's ``settings.device`` records where it
    ran. Estimates that ran off warn (``DataWarning``). Paths may be str or
    ``os.PathLike``.

    Raises:
        CatError: unreadable responses, a setting out of range or of the wrong type (the
            message names the argument), an unknown name, or options that do not go
            together (the messages name ``cat calibrate``'s flags).
    """
    request = CalibrationRequest(
        model=_model(model),
        source=(source := _source(responses, "responses")),
        responses=None if source is not None else responses,
        continuous_source=(beside := _source(continuous, "continuous")),
        continuous=None if beside is not None else continuous,
        method=check.member(method, "method", CalibrationMethod),
        scoring=check.member(scoring, "scoring", AbilityMethod),
        out=check.as_optional_path(out, "out"),
        continuous_out=check.as_optional_path(continuous_out, "continuous_out"),
        report=check.as_optional_path(report, "report"),
        abilities=check.as_optional_path(abilities, "abilities"),
        pool=check.as_optional_path(pool, "pool"),
        continuous_model=str(continuous_model),
        seed=check.seed(seed),
        priors=_priors(priors),
        max_iter=check.whole(max_iter, "max_iter", 1),
        tol=check.number(tol, "tol", above=0),
        quad_points=check.whole(quad_points, "quad_points", 5),
        id_column=check.flag(id_column, "id_column"),
        standard_errors=str(standard_errors),
        guessing=None if guessing is None else check.flag(guessing, "guessing"),
        collapse_scores=check.flag(collapse_scores, "collapse_scores"),
        item_types=_item_types(item_types),
        epsilon=check.number(epsilon, "epsilon", above=0, at_most=0.5),
        groups=groups if isinstance(groups, Mapping) else check.as_optional_path(groups, "groups"),
        group_column=str(group_column),
        dims=None if dims is None else check.whole(dims, "dims", 1),
        criterion=None if criterion is None else str(criterion),
        cross_fit=None if cross_fit is None else check.whole(cross_fit, "cross_fit", 2),
        cross_fit_lengths=_lengths(cross_fit_lengths),
        cross_fit_fallback=check.flag(cross_fit_fallback, "cross_fit_fallback"),
        progress=check.callback(progress, "progress"),
        cross_fit_progress=check.callback(cross_fit_progress, "cross_fit_progress"),
        score_subjects=check.flag(score_subjects, "score_subjects"),
        device=_device(device),
    )
    outcome = _run(request)
    if request.pool is not None:
        return _give_protocol(outcome, request.pool, request.source)
    return outcome


def _give_protocol(
    outcome: CalibrationOutcome, pool: Path, source: Path | None
) -> CalibrationOutcome:
    """Give ``pool`` the protocol ``cat synth`` wrote beside the responses ``source``
    (``responses.protocol.json``), when there is one: a pool keeps how its references
    were asked, and ``cat assess`` asks the same way."""
    if source is None:
        return outcome
    path = bundle_beside(source)
    if not path.is_file():
        return outcome
    try:
        protocol = install_protocol(pool, read_bundle(path))
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc
    return replace(outcome, protocol=protocol, protocol_source=path)


def _run(request: CalibrationRequest) -> CalibrationOutcome:
    """The steps, each the family's own."""
    family = family_of(request.model)
    questions = None
    if request.continuous_given or isinstance(request.responses, MixedResponses):
        family = with_continuous(family, request.model)
    elif takes_continuous(family) and request.pool is not None:
        # The pool's items say whether some scores are continuous: read them first.
        questions = read_pool_questions(request.pool)
        if any(item.continuous for item in questions.items):
            family = with_continuous(family, request.model)
    if not is_mixed(family):
        for flag, given in (
            ("--continuous-out", request.continuous_out is not None),
            ("--continuous-model", request.continuous_model != "auto"),
        ):
            if given:
                raise CatError(f"{flag} goes with --continuous FILE (a mixed calibration)")
    _check_device(request, family)
    family.check(request)
    if request.cross_fit is not None and request.pool is None:
        raise CatError("--cross-fit stores its errors in a pool: give --pool DIR")
    check_output_folders(request.out, request.report, request.abilities, request.continuous_out)
    if request.pool is not None and questions is None:
        questions = read_pool_questions(request.pool)  # refuse a broken pool before the fit
    data = family.read(request, questions)
    folds, fold_note = request.cross_fit, None
    if folds is not None:
        from cat.prediction.cross_fit import fold_count

        folds, fold_note = fold_count(data.n_subjects, folds, not request.cross_fit_fallback)
    fitted = family.fit(request, data, questions, fold_note)
    written = family.write(request, fitted)
    scores = family.score(request, fitted) if request.needs_abilities else None
    subjects = None if scores is None else family.abilities(scores)
    if request.abilities is not None and subjects is not None:
        write_abilities(subjects, request.abilities)
        written.append(request.abilities)
    errors = None
    if (
        request.pool is not None
        and questions is not None
        and family.store is not None
        and scores is not None
    ):
        stored = family.store(request, fitted, scores, questions, folds)
        errors = stored.errors
        written.extend(stored.written)
    if request.report is not None:
        fitted.report.write_json(request.report)
        written.append(request.report)
    if fitted.done is not None:
        request.tell(1.0, fitted.done)
    return CalibrationOutcome(
        report=cast(FitReport, fitted.report),  # each family's own
        params=fitted.params,
        mirt=fitted.mirt,
        cross_fit=errors,
        written=written,
        abilities=subjects,
        family=family.name,
    )


def _device(device: object) -> str:
    """``device`` checked (a GPU torch cannot use is refused here, before any work)."""
    if not isinstance(device, str):
        raise CatError(f"device must be a string like 'cpu' or 'cuda', got {device!r}")
    try:
        resolve_device(device)
    except IRTError as exc:
        raise CatError(str(exc)) from None
    return device.strip().lower()


def _check_device(request: CalibrationRequest, family: Family[Any, Any, Any]) -> None:
    """A device named outright must be one the model's fit can run on."""
    if request.device in ("cpu", "auto"):
        return
    if family not in (BINARY, GRADED):
        models = ", ".join((*BINARY.models, *GRADED.models))
        raise CatError(
            f"--device {request.device}: the torch path fits --model {models}; "
            f"--model {request.model} runs on the cpu (--device cpu, or auto)"
        )
    if request.method is not CalibrationMethod.EM:
        raise CatError(
            f"--device {request.device} runs --method em; --method bayes runs on the cpu"
        )


def _source(value: object, argument: str) -> Path | None:
    """``value`` as a path if it is one (a str or ``os.PathLike``), else None: data."""
    if isinstance(value, str) or hasattr(value, "__fspath__"):
        return check.as_path(value, argument)
    return None


def _lengths(lengths: object) -> list[int]:
    if isinstance(lengths, str) or not isinstance(lengths, Iterable):
        raise CatError(f"cross_fit_lengths must be a list of lengths, got {lengths!r}")
    checked = [check.whole(n, "cross_fit_lengths", 1) for n in lengths]
    if not checked:
        raise CatError("give at least one cross-fit length")
    return checked


def _priors(priors: object) -> Priors:
    if priors == "all" or isinstance(priors, bool | ItemPriors | PolytomousPriors):
        return priors  # "all" is the one str let through
    raise CatError(
        f"priors must be True, False, 'all', ItemPriors or PolytomousPriors, got {priors!r}"
    )


def _model(model: object) -> str:
    if not isinstance(model, str):
        raise CatError(f"model must be a str, got {model!r}")
    return model.lower()


def _item_types(item_types: object) -> Mapping[str, str] | None:
    if item_types is None or isinstance(item_types, Mapping):
        return item_types
    raise CatError(f"item_types must map item ids to types, got {item_types!r}")
