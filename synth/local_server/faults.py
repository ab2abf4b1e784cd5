"""Fault injection for the local server: the rates at which requests fail, and how."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from synth.errors import SynthError

__all__ = ["FaultPlan"]


def _rate() -> float:
    """A field of ``FaultPlan``: the share of requests that get a fault; off unless set."""
    return field(default=0.0, metadata={"kind": "rate"})


def _seconds(default: float) -> float:
    """A field of ``FaultPlan``: how long a fault makes the client wait."""
    return field(default=default, metadata={"kind": "seconds"})


@dataclass(frozen=True)
class FaultPlan:
    """Per-request fault rates (each in [0, 1], together at most 1).

    ``rate_429``: 429 with a ``Retry-After`` of ``retry_after`` seconds. ``rate_500``: 500.
    ``rate_slow``: the reply comes after ``slow_seconds`` (meant to outlast the client's
    timeout). ``rate_malformed``: 200 whose body is truncated JSON. ``rate_drop``: the
    connection is closed without any response.

    Each field's ``metadata["kind"]`` says which it is, a ``"rate"`` or ``"seconds"``:
    the checks, ``draw`` and the server's command line go by it.
    """

    rate_429: float = _rate()
    rate_500: float = _rate()
    rate_slow: float = _rate()
    rate_malformed: float = _rate()
    rate_drop: float = _rate()
    retry_after: float = _seconds(0.05)
    slow_seconds: float = _seconds(2.0)

    def __post_init__(self) -> None:
        rates = self._rates()
        for name, rate in rates:
            if not 0.0 <= rate <= 1.0:
                raise SynthError(f"fault rate {name} must be in [0, 1], got {rate}")
        total = sum(rate for _, rate in rates)
        if total > 1.0 + 1e-9:
            raise SynthError(f"fault rates add up to {total:g}, more than 1")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata["kind"] == "seconds" and not value >= 0.0:
                raise SynthError(f"{f.name} must be >= 0, got {value}")

    def _rates(self) -> tuple[tuple[str, float], ...]:
        """(fault, rate) in field order: ``("429", self.rate_429)`` first."""
        return tuple(
            (f.name.removeprefix("rate_"), getattr(self, f.name))
            for f in fields(self)
            if f.metadata["kind"] == "rate"
        )

    def draw(self, u: float) -> str:
        """The fault for a uniform draw ``u`` in [0, 1): a fault outcome name or ``"ok"``."""
        edge = 0.0
        for name, rate in self._rates():
            edge += rate
            if u < edge:
                return name
        return "ok"
