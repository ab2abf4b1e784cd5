"""Independent priors on the items of a polytomous pool (``irt.polytomous``): on the
slope (log-normal or normal), on every threshold (normal), on the 3PL lower asymptote
(Beta) and on a nominal item's free scoring values (normal about the gpcm's), for Bayes
modal estimation by ``irt.polytomous_em``.

With none the fit is plain marginal maximum likelihood, as R mirt's; the default adds
only a Beta(3, 15) prior on c when the pool has 3PL items, whose lower asymptote the
data identify weakly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from irt.errors import IRTError
from irt.estimation.arrays import like, namespace, zeros
from irt.polytomous import ItemType, PolytomousParams
from irt.priors import beta_log_kernel
from irt.types import FloatArray

__all__ = ["PolytomousPriors"]


@dataclass(frozen=True)
class PolytomousPriors:
    """Independent priors per item; a pair left ``None`` switches that prior off.

    - slope: log a ~ N(a_meanlog, a_sdlog²) (a log-normal, keeps a positive) or
      a ~ N(a_mean, a_sd²) — at most one of the two;
    - every threshold d_k (the intercept of a binary item) ~ N(d_mean, d_sd²);
    - the 3PL lower asymptote c ~ Beta(c_alpha, c_beta), shapes ≥ 1 so that the mode is
      inside (0, 1);
    - a nominal item's free scoring values ak_l ~ N(l, ak_sd²), l = 1..m − 1: shrunk
      towards the gpcm, whose scoring values are 1..m.

    ``PolytomousPriors()`` has none: plain marginal maximum likelihood, as R mirt.
    """

    a_meanlog: float | None = None
    a_sdlog: float | None = None
    a_mean: float | None = None
    a_sd: float | None = None
    d_mean: float | None = None
    d_sd: float | None = None
    c_alpha: float | None = None
    c_beta: float | None = None
    ak_sd: float | None = None

    def __post_init__(self) -> None:
        pairs = (
            ("a_meanlog", "a_sdlog"),
            ("a_mean", "a_sd"),
            ("d_mean", "d_sd"),
            ("c_alpha", "c_beta"),
        )
        for lo, hi in pairs:
            if (getattr(self, lo) is None) != (getattr(self, hi) is None):
                raise IRTError(f"the prior needs both {lo} and {hi}, or neither")
        if self.a_sdlog is not None and self.a_sd is not None:
            raise IRTError(
                "give a log-normal (a_meanlog, a_sdlog) or a normal (a_mean, a_sd) "
                "slope prior, not both"
            )
        for name in ("a_sdlog", "a_sd", "d_sd", "ak_sd"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and v > 0):
                raise IRTError(f"prior {name} must be positive, got {v}")
        for name in ("a_meanlog", "a_mean", "d_mean"):
            v = getattr(self, name)
            if v is not None and not np.isfinite(v):
                raise IRTError(f"prior {name} must be finite, got {v}")
        for name in ("c_alpha", "c_beta"):
            v = getattr(self, name)
            if v is not None and not v >= 1:
                raise IRTError(f"prior {name} must be >= 1 so that the mode is interior, got {v}")

    @classmethod
    def none(cls) -> PolytomousPriors:
        """No priors: plain marginal maximum likelihood."""
        return cls()

    @classmethod
    def default_for(cls, item_types: Sequence[ItemType]) -> PolytomousPriors:
        """Beta(3, 15) on c (mode 0.125) when the pool has 3PL items, whose lower
        asymptote the data identify weakly; nothing otherwise (mirt's default)."""
        if any(t.has_guessing for t in item_types):
            return cls(c_alpha=3.0, c_beta=15.0)
        return cls()

    @classmethod
    def weakly_informative(cls, item_types: Sequence[ItemType]) -> PolytomousPriors:
        """log a ~ N(0, 0.5²) and every threshold d ~ N(0, 3²) (with Beta(3, 15) on c
        for 3PL items, and ak_l ~ N(l, 1) on a nominal item's free scoring values, which
        tens of subjects cannot pin down alone): the binary calibration's defaults
        (a ~ LogNormal(0, 0.5), b ~ N(0, 2²), and d = −a b) carried to thresholds.
        They identify every item a few subjects answered, even one whose subjects all
        got one score or left a score unused (``identifying``): the case of a pool
        calibrated on tens of language models. An unused score between two used ones
        then gets a vanishing share of probability (its thresholds meet at their
        bound), so an answer there still places θ at their common location."""
        guessing = any(t.has_guessing for t in item_types)
        scores = any(t.family.has_free_scores for t in item_types)
        return cls(
            a_meanlog=0.0,
            a_sdlog=0.5,
            d_mean=0.0,
            d_sd=3.0,
            c_alpha=3.0 if guessing else None,
            c_beta=15.0 if guessing else None,
            ak_sd=1.0 if scores else None,
        )

    @property
    def identifying(self) -> bool:
        """Whether the priors alone pin every item down (slope and thresholds both)."""
        return (self.a_sdlog is not None or self.a_sd is not None) and self.d_sd is not None

    @property
    def log_slope(self) -> bool:
        """Whether slopes are estimated as log a (under a log-normal prior)."""
        return self.a_sdlog is not None

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for reports and provenance."""
        out: dict[str, Any] = {}
        if self.a_sdlog is not None:
            out["a"] = {"dist": "lognormal", "meanlog": self.a_meanlog, "sdlog": self.a_sdlog}
        if self.a_sd is not None:
            out["a"] = {"dist": "normal", "mean": self.a_mean, "sd": self.a_sd}
        if self.d_sd is not None:
            out["d"] = {"dist": "normal", "mean": self.d_mean, "sd": self.d_sd}
        if self.c_alpha is not None:
            out["c"] = {"dist": "beta", "alpha": self.c_alpha, "beta": self.c_beta}
        if self.ak_sd is not None:
            # The nominal scoring values about the gpcm's: ak_l − l ~ N(0, ak_sd²).
            out["ak_l - l"] = {"dist": "normal", "mean": 0.0, "sd": self.ak_sd}
        return out

    def log_density(
        self,
        a: FloatArray,
        d: FloatArray,
        c: FloatArray,
        guessing: bool = False,
        free_ak: FloatArray | None = None,
    ) -> FloatArray:
        """Log prior of each item (up to constants), (J,); ``d`` (J, m) unpadded; the c
        prior counts only for items with ``guessing`` (3PL), the scoring-value prior only
        for the free values ``free_ak`` (J, f) of nominal items. numpy or torch, like
        ``a``."""
        xp = namespace(a)
        out = zeros(a.shape[0], a)
        if self.ak_sd is not None and free_ak is not None and free_ak.shape[1]:
            gap = free_ak - like(np.arange(1.0, free_ak.shape[1] + 1), free_ak)
            out += -xp.sum(gap**2, axis=1) / (2 * self.ak_sd**2)
        if self.a_sdlog is not None:
            la = xp.log(a)
            out += -la - (la - cast(float, self.a_meanlog)) ** 2 / (2 * self.a_sdlog**2)
        if self.a_sd is not None:
            out += -((a - cast(float, self.a_mean)) ** 2) / (2 * self.a_sd**2)
        if self.d_sd is not None:
            out += -xp.sum((d - cast(float, self.d_mean)) ** 2, axis=1) / (2 * self.d_sd**2)
        if self.c_alpha is not None and guessing:
            out += beta_log_kernel(c, self.c_alpha, cast(float, self.c_beta))
        return out  # type: ignore[no-any-return]

    def scores_gradient(self, free_ak: FloatArray) -> FloatArray:
        """∂ log prior/∂ak of the free scoring values ``free_ak`` (J, f); zero without
        the prior. Its curvature is −1/ak_sd² on each."""
        if self.ak_sd is None:
            return zeros(free_ak.shape, free_ak)  # type: ignore[no-any-return]
        centre = like(np.arange(1.0, free_ak.shape[1] + 1), free_ak)
        return -(free_ak - centre) / self.ak_sd**2  # type: ignore[no-any-return]

    def log_prior(self, params: PolytomousParams) -> float:
        """The log prior of a whole pool (up to a constant): ``logpost_ − loglik_``."""
        assert params.ak is not None
        return sum(
            float(
                self.log_density(
                    params.a[idx],
                    params.d[idx, : k - 1],
                    params.c[idx],
                    kind.has_guessing,
                    params.ak[idx, : kind.family.free_scores(k - 1)],
                ).sum()
            )
            for kind, k, idx in params.groups()
        )
