"""COMPARE.json of ``cat compare`` as typed models: ``CompareResult.model_dump(mode="json")``
is the file."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from cat.assessment.result import PoolReference, ProtocolUse, Usage
from cat.comparison.settings import CompareSettings
from cat.results import ResultModel

Decision = Literal["A better", "B better", "equivalent", "inconclusive"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PredictedAccuracy(_Part):
    """A predicted full-pool accuracy with its interval at ``level``."""

    value: float
    low: float
    high: float
    level: float


class ModelSide(ResultModel):
    """One of the two models: its θ, predicted accuracy and the items it answered."""

    omit_if_none: ClassVar[tuple[str, ...]] = ("usage", "result", "protocol")

    model: str
    theta: float
    # None before the first answer.
    se: float | None
    n_items: int
    predicted_accuracy: PredictedAccuracy
    # Its full-pool accuracy where known (simulated, replayed).
    truth: float | None = None
    usage: Usage | None = None
    # The RESULT.json it was read from (``cat compare --results``).
    result: str | None = None
    # A live model's asking against the pool's protocol (RESULT.json's
    # settings.protocol); absent for a simulated or replayed one.
    protocol: ProtocolUse | None = None


class DifferenceInterval(ResultModel):
    """Δ = acc(A) − acc(B), predicted, with its interval: the wider of the posterior
    half-width (θ's uncertainty and the unseen answers' chance) and the conformal
    half-width of the pool's cross-fitted errors of reference pairs, scaled by the two
    models' disagreements where the pool stores the references' own, joined with the
    shared items' paired interval where both models answered the same items
    (``method`` says which applied; the other fields where they apply)."""

    omit_if_none: ClassVar[tuple[str, ...]] = (
        "stored_half_width",
        "stored_lengths",
        "references",
        "scale",
        "disagreement_a",
        "disagreement_b",
        "widened",
        "paired_low",
        "paired_high",
    )

    value: float
    low: float
    high: float
    # Each model's accuracy from "irt" (the plug-in) or "mixture" (the reference mixture).
    predictor: str
    # The chance that the intervals of every look hold the true difference: each look's
    # posterior half-width is at ``look_level`` = 1 − (1 − level)/K for K ``looks``, its
    # half-width from the pool's errors at ``stored_level`` (``CompareSettings``).
    level: float
    look_level: float
    stored_level: float
    looks: list[int]
    half_width: float
    posterior_half_width: float
    method: str
    stored_half_width: float | None = None
    stored_lengths: list[int] | None = None
    references: int | None = None
    # Above 1 where the test was shorter than every stored length (errors scaled up).
    scale: float | None = None
    # How far each model's prediction lies from its companion of the same answers,
    # where they scaled the stored half-width (cat.comparison.interval).
    disagreement_a: float | None = None
    disagreement_b: float | None = None
    # Whether they widened it: a model unlike the references, and the scaled width wider.
    widened: bool | None = None
    # The shared items' own interval of the paired difference at ``look_level``, which
    # [low, high] holds too: a decision needs both to exclude 0.
    paired_low: float | None = None
    paired_high: float | None = None


class Detectable(_Part):
    """The smallest true difference a test of this precision finds with ``power``,
    two-sided at ``level``: (z_(1−α/2) + z_power)·SE, SE = half-width / z."""

    value: float
    power: float
    level: float


class SharedItems(_Part):
    """The plain paired difference on the items both models answered: the mean of
    (A right − B right) with its ``level`` t interval. It describes those items only:
    adaptively chosen items are no sample of the pool."""

    n_items: int
    difference: float | None
    low: float | None
    high: float | None
    level: float


class TruthDifference(_Part):
    """Full-pool accuracies where both are known (simulated, replayed models)."""

    a: float
    b: float
    difference: float


class CompareItem(_Part):
    """One item asked, in order: each model's answer (None: could not answer, and the
    item is dropped for both) and Δ̂ with its half-width after the batch it was in (from
    two RESULT.json files: the items both answered, in A's order)."""

    id: str
    scenario: str | None
    response_a: int | None
    response_b: int | None
    # None where the comparison was made from two RESULT.json files.
    difference_after: float | None = None
    half_width_after: float | None = None


class CompareRunSettings(CompareSettings):
    """The comparison's settings and the run's own."""

    base_url_a: str | None = None
    base_url_b: str | None = None
    package_version: str


class CompareResult(ResultModel):
    """COMPARE.json: the decision, Δ̂ with its interval, each model's side, the items."""

    source: Literal["adaptive", "results"]
    model_a: str
    model_b: str
    pool: PoolReference
    settings: CompareRunSettings
    decision: Decision
    # The better model's name, on "A better" or "B better".
    better: str | None
    stop_reason: str | None
    difference: DifferenceInterval
    detectable_difference: Detectable
    n_items: int
    n_skipped: int
    a: ModelSide
    b: ModelSide
    shared: SharedItems
    truth: TruthDifference | None
    items: list[CompareItem]
    created: str
