"""The steps of ``cat.calibrate`` and what passes between them.

``cat.pools.calibration_job`` runs the same steps for every model: check the request,
read the responses, fit, write the parameter file(s), score the subjects, store the
calibration in a pool, write the report. What a step does for one family of models
(0/1 answers, scores 0..m, scores in [0, 1], both kinds together, a multidimensional
model) is the function a ``Family`` names; ``cat.pools.calibration_registry`` lists the
families. Adding a family is one module of such functions and one line there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, Protocol, TypeVar

from cat.errors import CatError
from cat.pools.report_keys import FitReportHead
from irt.continuous import ContinuousParams
from irt.estimation.methods import FitProgress
from irt.mirt_model import MirtParams
from irt.mixed import MixedParams
from irt.models import ItemParams
from irt.names import AbilityMethod, CalibrationMethod
from irt.polytomous import PolytomousParams
from irt.polytomous_priors import PolytomousPriors
from irt.priors import ItemPriors
from irt.scoring import Abilities
from itempool import PredictionErrors, QuestionSet

__all__ = [
    "CalibratedParams",
    "CalibrationRequest",
    "Family",
    "Fitted",
    "Priors",
    "Stored",
    "given_responses",
    "refuse_given",
]

#: The fitted item parameters of any family (a multidimensional model's are ``mirt``
#: beside its unidimensional companion's).
CalibratedParams = ItemParams | PolytomousParams | ContinuousParams | MixedParams
#: ``priors``: the model's defaults (True), none (False), every prior the model has a
#: parameter for ("all", ``cat calibrate --priors``), or the priors themselves.
Priors = bool | Literal["all"] | ItemPriors | PolytomousPriors


@dataclass(frozen=True)
class CalibrationRequest:
    """What ``cat.calibrate`` was asked, with each argument checked (see its docstring)."""

    model: str
    #: The responses' file, or None when they were given in memory (``responses``).
    source: Path | None
    responses: object
    #: With a scored model: the continuous scores beside, as a file or in memory.
    continuous_source: Path | None
    continuous: object
    method: CalibrationMethod
    scoring: AbilityMethod
    out: Path | None
    continuous_out: Path | None
    report: Path | None
    abilities: Path | None
    pool: Path | None
    continuous_model: str
    seed: int
    priors: Priors
    max_iter: int
    tol: float
    quad_points: int
    id_column: bool
    standard_errors: str
    guessing: bool | None
    collapse_scores: bool
    item_types: Mapping[str, str] | None
    epsilon: float
    #: The items' groups (scenarios): a questions file, or item id → group.
    groups: Path | Mapping[str, str] | None
    group_column: str
    dims: int | None
    criterion: str | None
    cross_fit: int | None
    cross_fit_lengths: Sequence[int]
    cross_fit_fallback: bool
    progress: FitProgress | None
    cross_fit_progress: Callable[[str, float], None] | None
    #: Score the subjects for the outcome even where no file asks for their abilities.
    score_subjects: bool = True
    #: Where EM's cycles run (``irt.estimation.devices``): the 1PL-4PL and scored fits.
    device: str = "cpu"

    @property
    def needs_abilities(self) -> bool:
        """Whether the subjects are scored: for ``abilities``, for the pool's references,
        or for the outcome."""
        return self.score_subjects or self.abilities is not None or self.pool is not None

    @property
    def name(self) -> str:
        """The responses' name in messages: the file's, or "responses" in memory."""
        return "responses" if self.source is None else self.source.name

    @property
    def input(self) -> str:
        """The report's ``input``: the file as given, or that the data were in memory."""
        return "(in memory)" if self.source is None else str(self.source)

    @property
    def continuous_given(self) -> bool:
        """Whether continuous scores were given beside the responses (a file or data)."""
        return self.continuous_source is not None or self.continuous is not None

    @property
    def priors_on(self) -> bool:
        """Whether the fit has priors at all (any setting but False)."""
        return self.priors is not False

    def tell(self, done: float, what: str) -> None:
        """Report progress, if anyone follows it."""
        if self.progress is not None:
            self.progress(done, what)


D = TypeVar("D", bound="_Responses")
F = TypeVar("F")
S = TypeVar("S")


class _Responses(Protocol):
    """What the job reads off any family's responses: how many subjects answered."""

    @property
    def n_subjects(self) -> int: ...


@dataclass(frozen=True)
class Fitted(Generic[F]):
    """A family's fit: the report (REPORT.json), the parameters, and ``detail``, what its
    later steps need (the data fitted, the calibrator, the groups ...)."""

    report: FitReportHead
    params: CalibratedParams
    detail: F
    #: The multidimensional model fitted beside ``params``, where one was asked for.
    mirt: MirtParams | None = None
    #: What the progress shows once the job is done (None: nothing more).
    done: str | None = None


@dataclass(frozen=True)
class Stored:
    """What a calibration stored in a pool: the references' cross-fitted errors per
    design (None without a cross-fit) and the files written."""

    errors: dict[str, PredictionErrors] | None
    written: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class Family(Generic[D, F, S]):
    """One family of models in the registry: the model names that select it and its
    own function for each step of the job.

    ``read`` gets the pool's questions where there is a pool, ``fit`` too (and the note
    on the cross-fit's folds, for the report); ``store`` is None for a family that pools
    do not take (its ``check`` refuses ``pool``)."""

    name: str
    models: tuple[str, ...]
    check: Callable[[CalibrationRequest], None]
    read: Callable[[CalibrationRequest, QuestionSet | None], D]
    fit: Callable[[CalibrationRequest, D, QuestionSet | None, str | None], Fitted[F]]
    write: Callable[[CalibrationRequest, Fitted[F]], list[Path]]
    score: Callable[[CalibrationRequest, Fitted[F]], S]
    abilities: Callable[[S], Abilities]
    store: Callable[[CalibrationRequest, Fitted[F], S, QuestionSet, int | None], Stored] | None


T = TypeVar("T")


def given_responses(request: CalibrationRequest, kind: type[T], what: str) -> T:
    """The responses given in memory, if they are what the family reads (``kind``)."""
    data = request.responses
    if not isinstance(data, kind):
        raise CatError(
            f"responses must be a path or {what} for model {request.model}, "
            f"got {type(data).__name__}"
        )
    return data


def refuse_given(flags: Sequence[tuple[str, bool]], message: str) -> None:
    """Raise ``message`` (with ``{flag}`` in it) for the first flag given."""
    for flag, present in flags:
        if present:
            raise CatError(message.format(flag=flag))
