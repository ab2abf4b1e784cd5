"""Bayes-modal priors on item parameters (recorded in every calibration's provenance)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, TypeVar, overload

import numpy as np

from irt.errors import IRTError
from irt.estimation.arrays import namespace
from irt.models import ModelKind

_Value = TypeVar("_Value", float, np.ndarray)


def beta_log_kernel(x: _Value, alpha: float, beta: float) -> _Value:
    """log of the Beta(α, β) density at ``x`` up to its constant: (α − 1) log x +
    (β − 1) log(1 − x), the prior term of a lower or upper asymptote."""
    xp = namespace(x)
    return (alpha - 1) * xp.log(x) + (beta - 1) * xp.log1p(-x)  # type: ignore[no-any-return]


class _BetaOnC(Protocol):
    @property
    def c_alpha(self) -> float: ...

    @property
    def c_beta(self) -> float: ...


def check_normal_beta(prior: _BetaOnC, sds: tuple[str, ...], who: str) -> None:
    """The checks of a prior of Normal parts and a Beta(``c_alpha``, ``c_beta``) on the
    lower asymptote (``MirtPriors``, ``BifactorPriors``): each SD named in ``sds``
    positive and finite, both Beta shapes at least 1 so that the mode is interior.
    ``who`` opens the messages ("the prior's")."""
    for name in sds:
        value = getattr(prior, name)
        if not (value > 0 and np.isfinite(value)):
            raise IRTError(f"{who} {name} must be positive, got {value}")
    if not (prior.c_alpha >= 1 and prior.c_beta >= 1):
        raise IRTError(f"{who} c_alpha and c_beta must be at least 1")


class _PriorSet:
    """A read-only flag of ``ItemPriors``: whether the prior holding ``field`` is on."""

    def __init__(self, field: str) -> None:
        self.field = field

    @overload
    def __get__(self, priors: None, owner: type[ItemPriors]) -> _PriorSet: ...

    @overload
    def __get__(self, priors: ItemPriors, owner: type[ItemPriors]) -> bool: ...

    def __get__(self, priors: ItemPriors | None, owner: type[ItemPriors]) -> _PriorSet | bool:
        if priors is None:
            return self
        return getattr(priors, self.field) is not None


@dataclass(frozen=True)
class ItemPriors:
    """Independent priors per item; ``None`` switches a prior off.

    - ``a`` ~ LogNormal(a_meanlog, a_sdlog): keeps slopes positive and away from 0 and ∞.
    - ``b`` ~ Normal(b_mean, b_sd): pulls items answered by few subjects towards the middle.
    - ``c`` ~ Beta(c_alpha, c_beta): with both shape parameters above 1 the mode lies
      strictly inside (0, 1), so ``c`` can neither collapse to 0 nor drift to 1.
    - ``d`` ~ Beta(d_alpha, d_beta), for the 4PL upper asymptote.
    """

    a_meanlog: float | None = 0.0
    a_sdlog: float | None = 0.5
    b_mean: float | None = 0.0
    b_sd: float | None = 2.0
    c_alpha: float | None = 3.0
    c_beta: float | None = 15.0
    d_alpha: float | None = 10.0
    d_beta: float | None = 2.0

    def __post_init__(self) -> None:
        for lo, hi, name in (
            (self.a_meanlog, self.a_sdlog, "a"),
            (self.b_mean, self.b_sd, "b"),
            (self.c_alpha, self.c_beta, "c"),
            (self.d_alpha, self.d_beta, "d"),
        ):
            if (lo is None) != (hi is None):
                raise IRTError(f"the prior on {name} needs both of its parameters or neither")
        for name in ("a_sdlog", "b_sd"):
            v = getattr(self, name)
            if v is not None and not v > 0:
                raise IRTError(f"prior {name} must be positive, got {v}")
        for name in ("c_alpha", "c_beta", "d_alpha", "d_beta"):
            v = getattr(self, name)
            if v is not None and not v >= 1:
                raise IRTError(f"prior {name} must be >= 1 so that the mode is interior, got {v}")

    # Whether a parameter has a prior, read off one of its two fields (``__post_init__``
    # makes the two agree).
    has_a = _PriorSet("a_sdlog")
    has_b = _PriorSet("b_sd")
    has_c = _PriorSet("c_alpha")
    has_d = _PriorSet("d_alpha")

    @classmethod
    def none(cls) -> ItemPriors:
        """No priors: plain marginal maximum likelihood (what R mirt does by default)."""
        return cls(None, None, None, None, None, None, None, None)

    @classmethod
    def default_for(cls, model: ModelKind | str) -> ItemPriors:
        """On for 3PL and 4PL (weakly identified with few subjects), off for 1PL and 2PL."""
        kind = ModelKind(model)
        return cls() if kind.has_guessing else cls.none()

    def for_model(self, model: ModelKind | str) -> ItemPriors:
        """Drop priors on parameters the model does not estimate."""
        kind = ModelKind(model)
        fields = asdict(self)
        if not kind.has_guessing:
            fields.update(c_alpha=None, c_beta=None)
        if not kind.has_slipping:
            fields.update(d_alpha=None, d_beta=None)
        if kind is ModelKind.ONE_PL:
            # One slope shared by all items is well identified; a prior would count J times.
            fields.update(a_meanlog=None, a_sdlog=None)
        return ItemPriors(**fields)

    @classmethod
    def from_description(cls, described: dict[str, Any]) -> ItemPriors:
        """The priors that ``describe`` wrote (e.g. into a pool's provenance); a
        parameter it does not mention gets no prior."""
        try:
            a, b = described.get("a"), described.get("b")
            c, d = described.get("c"), described.get("d")
            return cls(
                a_meanlog=a["meanlog"] if a else None,
                a_sdlog=a["sdlog"] if a else None,
                b_mean=b["mean"] if b else None,
                b_sd=b["sd"] if b else None,
                c_alpha=c["alpha"] if c else None,
                c_beta=c["beta"] if c else None,
                d_alpha=d["alpha"] if d else None,
                d_beta=d["beta"] if d else None,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise IRTError(f"unreadable prior description {described!r}") from exc

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for reports and pool provenance."""
        out: dict[str, Any] = {}
        if self.has_a:
            out["a"] = {"dist": "lognormal", "meanlog": self.a_meanlog, "sdlog": self.a_sdlog}
        if self.has_b:
            out["b"] = {"dist": "normal", "mean": self.b_mean, "sd": self.b_sd}
        if self.has_c:
            out["c"] = {"dist": "beta", "alpha": self.c_alpha, "beta": self.c_beta}
        if self.has_d:
            out["d"] = {"dist": "beta", "alpha": self.d_alpha, "beta": self.d_beta}
        return out
