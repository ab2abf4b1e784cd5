"""RESULT.json of ``cat assess`` as typed models (DESIGN.md, "The CLI contract").

``AssessmentResult.model_dump(mode="json")`` is the file: theta, se, n_items,
predicted_accuracy {value, low, high}, rank {position, of, above}, items [{id, response,
theta_after}], and the rest below. ``AssessmentSummary`` is the part computed from a
finished session (``cat.assessment.summary.summarize``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
)

from cat.assessment.profile import Profile
from cat.assessment.session import SessionConfig
from cat.results import ResultModel
from synth.generation import GenerationRecord


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Accuracy(_Part):
    """A predicted accuracy with its 90% interval."""

    value: float
    low: float
    high: float


class ScenarioAccuracy(Accuracy):
    """One scenario's predicted accuracy, and how many of its items were given."""

    n_given: int


class ThetaInterval(_Part):
    low: float
    high: float
    level: float = 0.9


class AccuracyInterval(ResultModel):
    """How the accuracy interval was built: from θ's uncertainty and the unseen answers'
    chance, or widened to the pool's cross-fitted errors (then the other fields say how)."""

    omit_if_none: ClassVar[tuple[str, ...]] = (
        "folds",
        "references",
        "length",
        "half_width",
        "level",
    )

    method: str
    folds: int | None = None
    references: int | None = None
    length: int | None = None
    half_width: float | None = None
    level: float | None = None


class PersonFit(_Part):
    """The lz statistic on the items given; ``flagged`` below ``threshold``."""

    lz: float | None
    flagged: bool
    threshold: float


class Neighbour(_Part):
    """A reference model and the probability that the assessed model is above it."""

    subject_id: str
    theta: float
    se: float
    p_above: float


class Rank(_Part):
    """1-based position among the references and the model (``of`` = references + 1);
    ``above`` lists every reference, strongest first."""

    position: int
    of: int
    above: list[Neighbour]


class DifficultyCheck(_Part):
    """Whether the answers depend on item difficulty as the references' answers do
    (``cat.designs.flatness``)."""

    gain: float = Field(
        description="Log-likelihood gain per item of the design's chances over a flat rate."
    )
    lowest_reference: float = Field(
        description="The smallest gain among the references, cross-fitted."
    )
    references: int
    length: int = Field(description="The stored test length the references' gains are from.")
    flagged: bool
    reason: str | None = None


class SlopeCheck(_Part):
    """Whether the answers follow the chances the design gave each item when it chose
    it (``cat.designs.flatness.slope_z``): a model that ignores difficulty falls far
    below 0."""

    z: float = Field(description="Cox's calibration-slope score statistic, ~N(0, 1) under fit.")
    threshold: float = Field(
        description="z below this flags the answers: the references' cross-fitted 5% "
        "point, or the design's one-sided 1% point where the pool stores too few."
    )
    references: int | None = Field(
        description="How many references' cross-fitted z set the threshold (null: none stored)."
    )
    items: int = Field(description="The items the statistic is over.")
    audit_every: int | None = Field(description="Every how many items one was an audit item.")
    flagged: bool
    reason: str | None = None


class Fallback(_Part):
    """The prediction from the answers themselves (``cat.prediction.recalibrated``),
    which replaced the design's because a check found the answers do not follow it."""

    intercept: float = Field(description="α of logit P(right) = α + β · logit p_j.")
    slope: float = Field(description="β: 1 follows the design, 0 ignores difficulty.")
    replaced: Accuracy = Field(description="The design's prediction it replaced.")
    reason: str


class UnlikeReferences(_Part):
    """How far the run's prediction lies from a companion prediction of the same answers
    (``cat.prediction.disagreement``): large where the model is unlike the references."""

    companion: str = Field(description="The companion predictor: irt or mixture.")
    companion_accuracy: float
    disagreement: float = Field(
        description="|predicted accuracy − the companion's|, which scales the interval."
    )
    threshold: float = Field(
        description="The references' 90% conformal quantile of their own disagreement."
    )
    references: int
    length: int = Field(description="The stored test length the references' figures are from.")
    flagged: bool
    reason: str | None = None


class AssessmentSummary(ResultModel):
    """θ with its interval, predicted accuracy overall and per scenario, rank, person fit.

    Every key the README lists for RESULT.json is always written: one that does not
    apply is null (``scenarios`` and ``scenario_interval`` on a pool without scenarios,
    ``rank`` without reference models), and a null ``difficulty_check`` has its reason
    in ``difficulty_check_skipped``."""

    theta: float
    se: float
    theta_interval: ThetaInterval
    n_items: int
    n_skipped: int
    stop_reason: str | None
    predicted_accuracy: Accuracy
    accuracy_interval: AccuracyInterval
    reference_offset: float
    person_fit: PersonFit
    scenarios: dict[str, ScenarioAccuracy] | None = None
    # How the per-scenario intervals were made, where not as the overall one's.
    scenario_interval: str | None = None
    difficulty_check: DifficultyCheck | None = None
    # Why difficulty_check is null (a sibling key, so that readers of the check's own
    # keys are unchanged); null when the check ran.
    difficulty_check_skipped: str | None = None
    # Null where the pool stores no disagreements of its references (calibrated before
    # they were stored) or the run's companion cannot be made (a pool of scored items).
    unlike_references: UnlikeReferences | None = None
    # Null on a pool of scored items, or before two items with a chance were answered.
    slope_check: SlopeCheck | None = None
    # Set where a check flagged the answers: predicted_accuracy is then this fallback's.
    fallback: Fallback | None = None
    rank: Rank | None = None


class ItemRecord(_Part):
    """One item given, in order; ``response`` is 1/0, a score 0..m, or a continuous
    item's score in [0, 1], and None for an item the model could not answer (skipped).

    A live model's item also holds its ``reply`` (the raw text; its prompt, settings and
    usage are in the run store: ``cat export``) and the ``answer`` parsed from it (a
    choice item's letters, the number read from an open reply). RESULT.json leaves each
    out where there is none (simulated and replayed examinees, a reply with no readable
    answer): ``AssessmentResult``'s dump drops them."""

    id: str
    scenario: str | None
    response: int | float | None
    theta_after: float
    se_after: float
    # Out of the repr: a reply can run to pages (the fields and the JSON keep it).
    reply: str | None = Field(None, repr=False)
    answer: str | None = Field(None, repr=False)


class PoolReference(_Part):
    """Which pool the model was assessed on."""

    name: str
    version: str | None
    n_items: int
    path: str
    # Items scored 0..m: every accuracy is then the mean share of each item's top score.
    scored: bool = False


class ProtocolUse(_Part):
    """How a live model's asking compares with the pool's protocol
    (``itempool.protocol``): ``followed`` when it was asked and graded exactly as the
    references were, else ``differs`` names each field that departs (its θ is then on
    another scale than the references')."""

    name: str
    source: str | None = None
    style: str
    followed: bool
    differs: list[str] = Field(default_factory=list)
    # Which of the protocol's forms was followed (pool.json protocol.form and forms).
    form: str = "default"

    def label(self) -> str:
        """The protocol's name (and form), and the fields departed from when not
        followed."""
        name = self.name if self.form == "default" else f"{self.name} ({self.form} form)"
        return name if self.followed else f"{name}, departed from: {', '.join(self.differs)}"

    def warning(self, model: str) -> str:
        """One line saying that ``model`` was asked off the protocol."""
        return (
            f"warning: {model} was not asked as the pool's protocol {self.name!r} says "
            f"({', '.join(self.differs)} differ): its θ and predicted accuracy are not on "
            "the references' scale"
        )


class AssessmentSettings(SessionConfig):
    """The session's settings and the run's own."""

    batch_size: int = 1
    base_url: str | None = None
    # The LLM judge that graded open items ("MODEL" or "MODEL@URL"); None: the metric.
    judge_model: str | None = None
    # How a live model was asked (synth.generation; the template by path and sha256);
    # None for an examinee that makes no call.
    generation: GenerationRecord | None = None
    # The pool's protocol and whether the live model was asked by it; None for an
    # examinee that makes no call.
    protocol: ProtocolUse | None = None
    # The calls in flight at once (shared by every model of one cat assess run).
    concurrency: int | None = None
    package_version: str


class Truth(_Part):
    """The model's real full-pool accuracy, where it is known (simulated or replayed)."""

    accuracy: float


class Usage(_Part):
    """Calls and tokens of a live model."""

    prompt_tokens: int
    completion_tokens: int
    calls: int
    calls_from_store: int
    pool_items: int
    # The part of completion_tokens a reasoning model thought (where the endpoint says).
    reasoning_tokens: int = 0
    # Answers cut off at the token limit (finish reason "length"): graded as they came.
    truncated: int = 0


class CostEstimate(_Part):
    """What a live model's run was expected to cost before its first call (what
    ``--dry-run`` shows), beside ``usage``, what it spent: ``calls`` at most, tokens in
    and out (``completion_tokens`` None: no reply length known), and with prices the
    money expected (``cost``) and spent (``spent_cost``, ``usage``'s tokens at the same
    prices); ``max_cost`` the limit the run was held to."""

    calls: int
    prompt_tokens: int
    completion_tokens: int | None
    reply_source: str
    cost: float | None = None
    spent_cost: float | None = None
    max_cost: float | None = None


class _Header(_Part):
    """Which model, on which pool, with which settings: RESULT.json's first keys."""

    model: str
    pool: PoolReference
    settings: AssessmentSettings
    seed: int


#: The keys of an item that RESULT.json leaves out where they hold None.
_ITEM_KEYS_IF_SET = ("reply", "answer")


class _Tail(_Part):
    """The items in the order given, when, and what only some examinees have."""

    items: list[ItemRecord]
    created: str
    truth: Truth | None = None
    usage: Usage | None = None
    # A live model's expected calls, tokens and cost (cat.assessment.cost_estimate).
    estimate: CostEstimate | None = None
    # A multidimensional pool's factor scores and ranks (cat.assessment.profile).
    profile: Profile | None = None

    @field_serializer("items", mode="wrap")
    def _items_without_absent_replies(
        self, items: list[ItemRecord], handler: SerializerFunctionWrapHandler
    ) -> Any:
        # Here rather than as ItemRecord's own serializer: the checkpoint dumps each
        # record alone, and a model serializer would turn an infinite se_after into None.
        return [
            {k: v for k, v in item.items() if v is not None or k not in _ITEM_KEYS_IF_SET}
            for item in handler(items)
        ]


class AssessmentResult(_Tail, AssessmentSummary, _Header):
    """One model's assessment: RESULT.json (header, then the summary, then the items)."""

    # ``truth`` and ``usage`` are listed in the README too: null where they do not apply.
    omit_if_none: ClassVar[tuple[str, ...]] = ("profile", "estimate")
