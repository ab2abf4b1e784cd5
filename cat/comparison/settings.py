"""The settings of a paired comparison, as COMPARE.json records them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cat.engine.names import DEFAULT_ESTIMATOR, EstimatorName

#: ``cat compare --margin``: differences within ±1 point count as equivalent.
DEFAULT_MARGIN = 0.01
#: ``cat compare --max-length``.
DEFAULT_MAX_LENGTH = 250
#: ``cat compare --min-length``: no decision before this many shared items.
DEFAULT_MIN_LENGTH = 30
#: Item selection: "difference" (``cat.comparison.criterion``) or uniformly "random".
Selection = Literal["difference", "random"]


class CompareSettings(BaseModel):
    """Every setting of a comparison; with the seed and the answers it fixes the items.

    ``looks``: the numbers of shared items at which the stopping rule is checked (and
    always at ``max_length``); None: ``min_length`` doubled until within three quarters
    of ``max_length``, then ``max_length`` (30, 60, 120, 250 by default).

    ``level``: the interval's coverage over all K looks together. The interval is the
    wider of two half-widths (``cat.comparison.interval``), and looking K times costs
    them differently. The measurement part (θ's uncertainty) changes from look to look
    as answers come in, so K looks at it are K chances of a wrong decision: it is taken
    at 1 − (1 − level)/K each (Bonferroni, ``look_level``). The misfit part, from the
    references' cross-fitted errors, is the pair's own profile, which more answers do not
    change: K looks at it are looks at one quantity, and it stays at ``level``
    (``stored_level``; ``stored_multiplicity`` takes it at ``look_level`` too).
    ``each_look`` sets both parts' level at every look instead (the looks together then
    keep no stated level; the benchmark measures what that costs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    margin: float = Field(DEFAULT_MARGIN, gt=0, lt=1)
    max_length: int = Field(DEFAULT_MAX_LENGTH, ge=1)
    min_length: int = Field(DEFAULT_MIN_LENGTH, ge=0)
    batch_size: int = Field(1, ge=1)
    selection: Selection = "difference"
    # Each model's accuracy from "irt" (the plug-in), "mixture" (the reference mixture)
    # or "auto": the one of narrower cross-fitted pair errors (cat.comparison.predictors).
    predictor: Literal["auto", "irt", "mixture"] = "auto"
    content_balancing: bool = True
    estimator: EstimatorName = DEFAULT_ESTIMATOR
    looks: tuple[int, ...] | None = None
    level: float = Field(0.95, gt=0.5, lt=1)
    each_look: float | None = Field(None, gt=0.5, lt=1)
    stored_multiplicity: bool = False
    seed: int = 0

    @field_validator("looks")
    @classmethod
    def _increasing(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None and (not value or any(k < 1 for k in value)):
            raise ValueError("looks must be positive numbers of items")
        return None if value is None else tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _min_within_max(self) -> CompareSettings:
        if self.min_length > self.max_length:
            raise ValueError(
                f"the minimum length ({self.min_length}) is above the maximum ({self.max_length})"
            )
        return self

    def look_lengths(self) -> tuple[int, ...]:
        """The shared-item counts at which the stopping rule is checked."""
        if self.looks is not None:
            inside = tuple(k for k in self.looks if k < self.max_length)
            return (*inside, self.max_length)
        out = []
        k = max(self.min_length, 1)
        while k < 0.75 * self.max_length:
            out.append(k)
            k *= 2
        return (*out, self.max_length)

    @property
    def look_level(self) -> float:
        """The level of the measurement part of each look's interval: 1 − (1 − level)/K,
        or ``each_look``."""
        if self.each_look is not None:
            return self.each_look
        return 1.0 - (1.0 - self.level) / len(self.look_lengths())

    @property
    def stored_level(self) -> float:
        """The level of the misfit part of each look's interval."""
        if self.each_look is not None or self.stored_multiplicity:
            return self.look_level
        return self.level
