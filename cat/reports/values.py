"""What the page and the plots both read from an ``AssessmentResult``.

The result is typed, so nothing here guards against a missing key; what remains is that
a float may be infinite or NaN (an SE without information, say), which the report shows
as a blank rather than a broken axis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cat.assessment.result import AssessmentResult, Neighbour

__all__ = ["ModelInterval", "finite", "model_interval", "references"]


def finite(value: float | None) -> bool:
    """Whether ``value`` is a number that can be printed or plotted."""
    return value is not None and math.isfinite(value)


@dataclass(frozen=True)
class ModelInterval:
    """The model's θ, the ends of its interval and the interval's level as text."""

    theta: float
    low: float
    high: float
    level: str

    @property
    def bounded(self) -> bool:
        return finite(self.low) and finite(self.high)


def model_interval(result: AssessmentResult) -> ModelInterval:
    interval = result.theta_interval
    level = f"{100 * interval.level:.0f}%" if finite(interval.level) else "90%"
    return ModelInterval(result.theta, interval.low, interval.high, level)


def references(result: AssessmentResult) -> list[Neighbour]:
    """Every reference subject with a finite θ, strongest first; none without a rank."""
    if result.rank is None:
        return []
    return sorted((r for r in result.rank.above if finite(r.theta)), key=lambda r: -r.theta)
