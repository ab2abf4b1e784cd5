"""``pool.json``'s ``prediction_errors``: how far the references' predicted accuracy
landed from their real accuracy when they were left out of the calibration
(``cat.prediction.cross_fit`` computes them; ``cat.prediction.conformal`` turns them into
the half-width by which ``cat assess`` widens its interval)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class PredictionErrors(BaseModel):
    """Signed errors (predicted − real accuracy) of the references, per test length,
    from a K-fold replay."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = "k-fold replay"
    folds: int = Field(ge=2)
    seed: int
    policy: str
    predictor: str = "plug-in"
    errors: dict[str, list[float]]
    # Per length, each reference's mean log-likelihood gain per item of the design's own
    # chances over a flat rate (cat.designs.flatness).
    difficulty_gain: dict[str, list[float]] | None = None
    # Per length, aligned with ``errors``: each reference's |design's prediction − its
    # companion's from the same answers| (cat.prediction.disagreement), which sizes the
    # interval of a model by how unlike the references it is.
    disagreement: dict[str, list[float]] | None = None
    # Per length: each reference's slope check z (cat.designs.flatness.slope_z) of its
    # answers against the chances the design chose the items at, which sets the
    # threshold below which a model's answers are said not to follow difficulty.
    slope_z: dict[str, list[float]] | None = None
    # Per length, aligned with ``errors``: the signed errors of the fallback prediction
    # (cat.prediction.recalibrated), which size its interval where it is used.
    fallback_errors: dict[str, list[float]] | None = None
    # Per length and scenario name: the signed errors of the accuracy per scenario.
    scenario_errors: dict[str, dict[str, list[float]]] | None = None

    @field_validator("errors")
    @classmethod
    def _lengths_and_values(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        if not value:
            raise ValueError("no test length")
        for length, errors in value.items():
            if not length.isdigit() or int(length) < 1:
                raise ValueError(f"test length {length!r} is not a positive whole number")
            if len(errors) < 2 or not all(math.isfinite(e) and abs(e) <= 1 for e in errors):
                raise ValueError(f"length {length}: need at least 2 errors in [-1, 1]")
        return value

    @model_validator(mode="after")
    def _disagreement_beside_errors(self) -> PredictionErrors:
        for length, values in (self.disagreement or {}).items():
            errors = self.errors.get(length)
            if errors is None or len(values) != len(errors):
                raise ValueError(
                    f"disagreement at length {length}: one value per error of that length"
                )
            if not all(math.isfinite(v) and 0 <= v <= 1 for v in values):
                raise ValueError(f"disagreement at length {length}: values must be in [0, 1]")
        for length, values in (self.fallback_errors or {}).items():
            errors = self.errors.get(length)
            if errors is None or len(values) != len(errors):
                raise ValueError(
                    f"fallback_errors at length {length}: one value per error of that length"
                )
            if not all(math.isfinite(v) and abs(v) <= 1 for v in values):
                raise ValueError(f"fallback_errors at length {length}: values must be in [-1, 1]")
        for length, values in (self.slope_z or {}).items():
            if length not in self.errors or not all(math.isfinite(v) for v in values):
                raise ValueError(f"slope_z at length {length}: finite values at a stored length")
        return self

    def nearest_length(self, length: int) -> int:
        """The stored test length nearest to ``length`` (the longer on a tie)."""
        return min((int(k) for k in self.errors), key=lambda k: (abs(k - length), -k))
