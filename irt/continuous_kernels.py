"""The numerical kernels of the continuous item models (``irt.continuous``): clipping of
scores at ε, the statistics (t₁, t₂) and the coefficients (A, B, C) of the exponential-
family form log f(x | θ) = A + B t₁ + C t₂ − log(x(1 − x)) that both models share, and
the Beta's shapes and Fisher information for η (derived in ``irt.continuous``).
"""

from __future__ import annotations

import numpy as np

from irt.errors import ParamsError, ResponseDataError
from irt.types import FloatArray

__all__ = [
    "DEFAULT_EPSILON",
    "beta_eta_information",
    "beta_information",
    "beta_shapes",
    "check_epsilon",
    "check_scores",
    "clip_scores",
    "coefficients",
    "log_jacobian",
    "statistics",
]

_LOG_2PI = float(np.log(2 * np.pi))
#: Scores are clipped to [ε, 1 − ε] before the logit or the logarithms: ε = 0.001 is
#: below the resolution of ROUGE-L on answers of up to ~1,000 tokens, and puts a score
#: of 0 at y = logit(ε) ≈ −6.9 on the CRM's scale.
DEFAULT_EPSILON = 1e-3
_LOG_2PI = float(np.log(2 * np.pi))


def check_epsilon(epsilon: float) -> float:
    if not (np.isfinite(epsilon) and 0 < epsilon < 0.5):
        raise ParamsError(f"epsilon must be in (0, 0.5), got {epsilon}")
    return float(epsilon)


def check_scores(x: FloatArray, where: str = "") -> None:
    """Raise if a score (other than NaN, missing) lies outside [0, 1]."""
    bad = ~np.isnan(x) & ~((x >= 0) & (x <= 1))
    if bad.any():
        value = float(x[np.unravel_index(int(np.flatnonzero(bad)[0]), x.shape)])
        raise ResponseDataError(f"score {value:g}{where} is outside [0, 1]")


def clip_scores(x: object, epsilon: float = DEFAULT_EPSILON) -> FloatArray:
    """Scores clipped to [ε, 1 − ε] (NaN stays NaN)."""
    return np.asarray(np.clip(np.asarray(x, dtype=np.float64), epsilon, 1 - epsilon))


def statistics(is_crm: object, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(t₁, t₂) of clipped scores ``x``: (y, y²) where ``is_crm`` (broadcast against x),
    (log x, log(1 − x)) elsewhere."""
    from scipy.special import logit  # scipy.special at first use: 0.4 s of start-up saved

    crm = np.broadcast_to(np.asarray(is_crm, dtype=bool), x.shape)
    y = logit(x)
    t1 = np.where(crm, y, np.log(x))
    t2 = np.where(crm, y**2, np.log1p(-x))
    return np.asarray(t1), np.asarray(t2)


def log_jacobian(x: FloatArray) -> FloatArray:
    """−log(x(1 − x)) of clipped scores: the term shared by both densities."""
    return np.asarray(-np.log(x) - np.log1p(-x))


def beta_shapes(eta: FloatArray, tau: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The Beta's shapes m = exp((η + τ)/2), n = exp((τ − η)/2)."""
    return np.exp((eta + tau) / 2), np.exp((tau - eta) / 2)


def _trigamma_remainder(x: FloatArray) -> FloatArray:
    """r(x) = x²ψ₁(x) − x − ½, directly up to x = 20 and beyond by the asymptotic series
    ψ₁(x) = 1/x + 1/(2x²) + 1/(6x³) − 1/(30x⁵) + 1/(42x⁷) − 1/(30x⁹) + … (error
    below 1e-13), so that the Beta's information does not cancel for large shapes."""
    from scipy.special import polygamma

    x = np.asarray(x, dtype=np.float64)
    small = x <= 20.0
    xs = np.where(small, x, 1.0)
    direct = xs**2 * polygamma(1, xs) - xs - 0.5
    xl = np.where(small, 20.0, x)
    series = 1 / (6 * xl) - 1 / (30 * xl**3) + 1 / (42 * xl**5) - 1 / (30 * xl**7)
    return np.asarray(np.where(small, direct, series))


def beta_information(m: FloatArray, n: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Fisher information of one Beta(m, n) score in (η, τ): I_ηη, I_ητ, I_ττ.

    With ∂(m, n)/∂η = (m/2, −n/2), ∂(m, n)/∂τ = (m/2, n/2) and the Beta's information in
    (m, n), s = m + n:

        4I_ηη = m²ψ₁(m) + n²ψ₁(n) − (m − n)²ψ₁(s),
        4I_ητ = m²ψ₁(m) − n²ψ₁(n) − (m² − n²)ψ₁(s),
        4I_ττ = m²ψ₁(m) + n²ψ₁(n) − s²ψ₁(s),

    computed with x²ψ₁(x) = x + ½ + r(x) and δ = (m − n)/s as 4I_ηη = 4mn/s + 1 − δ²/2 +
    r(m) + r(n) − δ² r(s), 4I_ητ = r(m) − r(n) − δ(½ + r(s)), 4I_ττ = ½ + r(m) + r(n) −
    r(s), in which nothing of the size of m or n cancels."""
    s = m + n
    delta = (m - n) / s
    rm, rn, rs = _trigamma_remainder(m), _trigamma_remainder(n), _trigamma_remainder(s)
    i_ee = m * n / s + 0.25 * (1 - delta**2 / 2 + rm + rn - delta**2 * rs)
    i_et = 0.25 * (rm - rn - delta * (0.5 + rs))
    i_tt = 0.25 * (0.5 + rm + rn - rs)
    return np.asarray(i_ee), np.asarray(i_et), np.asarray(i_tt)


def beta_eta_information(m: FloatArray, n: FloatArray) -> FloatArray:
    """Fisher information of one Beta(m, n) score for η, I_ηη of ``beta_information``."""
    return beta_information(m, n)[0]


def coefficients(
    is_crm: object, eta: FloatArray, dispersion: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(A, B, C) of log f = A + B t₁ + C t₂ − log(x(1 − x)) at linear predictors
    ``eta``; ``dispersion`` is σ for CRM entries and τ for Beta ones (all broadcast
    together)."""
    from scipy.special import betaln

    crm = np.asarray(is_crm, dtype=bool)
    eta, disp = np.broadcast_arrays(np.asarray(eta, dtype=np.float64), dispersion)
    crm = np.broadcast_to(crm, eta.shape)
    sigma = np.where(crm, disp, 1.0)
    tau = np.where(crm, 0.0, disp)
    m, n = beta_shapes(np.where(crm, 0.0, eta), tau)
    inv_var = 1.0 / sigma**2
    a_coef = np.where(crm, -0.5 * _LOG_2PI - np.log(sigma) - 0.5 * eta**2 * inv_var, -betaln(m, n))
    b_coef = np.where(crm, eta * inv_var, m)
    c_coef = np.where(crm, -0.5 * inv_var, n)
    return np.asarray(a_coef), np.asarray(b_coef), np.asarray(c_coef)
