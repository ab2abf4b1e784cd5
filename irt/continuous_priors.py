"""Independent priors on the items of a continuous pool (``irt.continuous``), for Bayes
modal estimation by ``irt.continuous_em``: a log-normal slope, a normal intercept, and a
normal prior on the CRM's log σ or the Beta's τ.

The priors are written in the EM's internal coordinates ψ = (log a, d, κ), with κ = log σ
for a CRM item and τ for a Beta item; the slope's prior is the log-normal density of a
(so its mode is that of ``irt.polytomous_priors``' log-normal slope prior).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from irt.errors import IRTError
from irt.types import BoolArray, FloatArray

__all__ = ["ContinuousPriors"]

_PAIRS = (
    ("a_meanlog", "a_sdlog"),
    ("d_mean", "d_sd"),
    ("log_sigma_mean", "log_sigma_sd"),
    ("tau_mean", "tau_sd"),
)


@dataclass(frozen=True)
class ContinuousPriors:
    """Independent priors per item; a pair left ``None`` switches that prior off.

    - slope: log a ~ N(a_meanlog, a_sdlog²) (a log-normal on a > 0);
    - intercept: d ~ N(d_mean, d_sd²);
    - CRM items: log σ ~ N(log_sigma_mean, log_sigma_sd²);
    - Beta items: τ ~ N(tau_mean, tau_sd²).

    ``ContinuousPriors()`` has none: plain marginal maximum likelihood.
    """

    a_meanlog: float | None = None
    a_sdlog: float | None = None
    d_mean: float | None = None
    d_sd: float | None = None
    log_sigma_mean: float | None = None
    log_sigma_sd: float | None = None
    tau_mean: float | None = None
    tau_sd: float | None = None

    def __post_init__(self) -> None:
        for lo, hi in _PAIRS:
            mean, sd = getattr(self, lo), getattr(self, hi)
            if (mean is None) != (sd is None):
                raise IRTError(f"the prior needs both {lo} and {hi}, or neither")
            if sd is not None and not (np.isfinite(sd) and sd > 0):
                raise IRTError(f"prior {hi} must be positive, got {sd}")
            if mean is not None and not np.isfinite(mean):
                raise IRTError(f"prior {lo} must be finite, got {mean}")

    @classmethod
    def none(cls) -> ContinuousPriors:
        """No priors: plain marginal maximum likelihood."""
        return cls()

    @classmethod
    def weakly_informative(cls) -> ContinuousPriors:
        """log a ~ N(0, 0.5²) and d ~ N(0, 3²) as ``PolytomousPriors.weakly_informative``;
        log σ ~ N(0, 1) (a residual SD between e⁻² and e² logits, 95%); τ ~ N(2, 2²)
        (a precision m + n = 2 e^{τ/2} cosh(η/2) of about 5 at η = 0, between 1 and 40).
        They keep an item answered by a few subjects, or answered alike by all, finite."""
        return cls(
            a_meanlog=0.0,
            a_sdlog=0.5,
            d_mean=0.0,
            d_sd=3.0,
            log_sigma_mean=0.0,
            log_sigma_sd=1.0,
            tau_mean=2.0,
            tau_sd=2.0,
        )

    @property
    def any(self) -> bool:
        """Whether any prior is on."""
        return any(getattr(self, hi) is not None for _, hi in _PAIRS)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for reports and provenance."""
        out: dict[str, Any] = {}
        if self.a_sdlog is not None:
            out["a"] = {"dist": "lognormal", "meanlog": self.a_meanlog, "sdlog": self.a_sdlog}
        if self.d_sd is not None:
            out["d"] = {"dist": "normal", "mean": self.d_mean, "sd": self.d_sd}
        if self.log_sigma_sd is not None:
            out["log_sigma"] = {
                "dist": "normal",
                "mean": self.log_sigma_mean,
                "sd": self.log_sigma_sd,
            }
        if self.tau_sd is not None:
            out["tau"] = {"dist": "normal", "mean": self.tau_mean, "sd": self.tau_sd}
        return out

    def _dispersion(self, is_crm: BoolArray) -> tuple[FloatArray, FloatArray]:
        """Per item the prior mean and precision (1/sd², 0 without a prior) of κ."""
        mean = np.where(is_crm, self.log_sigma_mean or 0.0, self.tau_mean or 0.0)
        prec_crm = 0.0 if self.log_sigma_sd is None else 1.0 / self.log_sigma_sd**2
        prec_beta = 0.0 if self.tau_sd is None else 1.0 / self.tau_sd**2
        return np.asarray(mean), np.asarray(np.where(is_crm, prec_crm, prec_beta))

    def log_density(self, psi: FloatArray, is_crm: BoolArray) -> FloatArray:
        """Log prior of each item (up to constants) at ψ (J, 3), (J,)."""
        out = np.zeros(len(psi))
        if self.a_sdlog is not None:
            alpha = psi[:, 0]
            out += -alpha - (alpha - cast(float, self.a_meanlog)) ** 2 / (2 * self.a_sdlog**2)
        if self.d_sd is not None:
            out += -((psi[:, 1] - cast(float, self.d_mean)) ** 2) / (2 * self.d_sd**2)
        mean, prec = self._dispersion(is_crm)
        out += -0.5 * prec * (psi[:, 2] - mean) ** 2
        return out

    def gradient(self, psi: FloatArray, is_crm: BoolArray) -> FloatArray:
        """∂ log prior/∂ψ, (J, 3)."""
        out = np.zeros_like(psi)
        if self.a_sdlog is not None:
            out[:, 0] = -1.0 - (psi[:, 0] - cast(float, self.a_meanlog)) / self.a_sdlog**2
        if self.d_sd is not None:
            out[:, 1] = -(psi[:, 1] - cast(float, self.d_mean)) / self.d_sd**2
        mean, prec = self._dispersion(is_crm)
        out[:, 2] = -prec * (psi[:, 2] - mean)
        return out

    def curvature(self, is_crm: BoolArray) -> FloatArray:
        """−∂² log prior/∂ψ², diagonal per item (J, 3) (the priors are independent)."""
        out = np.zeros((len(is_crm), 3))
        if self.a_sdlog is not None:
            out[:, 0] = 1.0 / self.a_sdlog**2
        if self.d_sd is not None:
            out[:, 1] = 1.0 / self.d_sd**2
        out[:, 2] = self._dispersion(is_crm)[1]
        return out
