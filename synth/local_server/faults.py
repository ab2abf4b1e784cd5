"""Fault injection for the local server: the rates at which requests fail, and how."""

from __future__ import annotations

from dataclasses import dataclass

from synth.errors import SynthError

__all__ = ["FaultPlan"]


@dataclass(frozen=True)
class FaultPlan:
    """Per-request fault rates (each in [0, 1], together at most 1).

    ``rate_429``: 429 with a ``Retry-After`` of ``retry_after`` seconds. ``rate_500``: 500.
    ``rate_slow``: the reply comes after ``slow_seconds`` (meant to outlast the client's
    timeout). ``rate_malformed``: 200 whose body is truncated JSON. ``rate_drop``: the
    connection is closed without any response.
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_slow: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    retry_after: float = 0.05
    slow_seconds: float = 2.0

    def __post_init__(self) -> None:
        rates = self._rates()
        for name, rate in rates:
            if not 0.0 <= rate <= 1.0:
                raise SynthError(f"fault rate {name} must be in [0, 1], got {rate}")
        total = sum(rate for _, rate in rates)
        if total > 1.0 + 1e-9:
            raise SynthError(f"fault rates add up to {total:g}, more than 1")
        if not self.retry_after >= 0.0:
            raise SynthError(f"retry_after must be >= 0, got {self.retry_after}")
        if not self.slow_seconds >= 0.0:
            raise SynthError(f"slow_seconds must be >= 0, got {self.slow_seconds}")

    def _rates(self) -> tuple[tuple[str, float], ...]:
        return (
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("slow", self.rate_slow),
            ("malformed", self.rate_malformed),
            ("drop", self.rate_drop),
        )

    def draw(self, u: float) -> str:
        """The fault for a uniform draw ``u`` in [0, 1): a fault outcome name or ``"ok"``."""
        edge = 0.0
        for name, rate in self._rates():
            edge += rate
            if u < edge:
                return name
        return "ok"
