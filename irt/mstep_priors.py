"""The items' log prior density in (a, b, c, d), and its gradient and curvature in the
M-step's internal coordinates (see ``irt.mstep_coords``)."""

from __future__ import annotations

from irt.estimation.arrays import namespace, zeros
from irt.mstep_coords import ALPHA, DELTA, GAMMA, LAMBDA, MStepSpec, to_abcd
from irt.priors import beta_log_kernel
from irt.types import FloatArray


def log_prior(coords: FloatArray, spec: MStepSpec) -> FloatArray:
    """Log prior density of each item in (a, b, c, d), up to constants; shape (J,)."""
    pri = spec.priors
    a, b, c, d = to_abcd(coords, spec)
    out = zeros(a.shape[0], like=coords)
    if pri.has_a:
        la = namespace(a).log(a)
        out += -la - (la - pri.a_meanlog) ** 2 / (2 * pri.a_sdlog**2)  # type: ignore[operator]
    if pri.has_b:
        out += -((b - pri.b_mean) ** 2) / (2 * pri.b_sd**2)  # type: ignore[operator]
    if pri.has_c:
        out += beta_log_kernel(c, pri.c_alpha, pri.c_beta)  # type: ignore[arg-type]
    if pri.has_d:
        out += beta_log_kernel(d, pri.d_alpha, pri.d_beta)  # type: ignore[arg-type]
    return out  # type: ignore[no-any-return]


def add_prior_terms(
    grad: FloatArray,
    info: FloatArray,
    coords: FloatArray,
    a: FloatArray,
    b: FloatArray,
    c: FloatArray,
    d: FloatArray,
    spec: MStepSpec,
    exact: bool = False,
) -> None:
    """Add the log prior's gradient and curvature. The b prior's curvature is its
    Gauss–Newton part (always positive semi-definite) unless ``exact``; the exact one
    restores Newton's quadratic convergence for items far from the prior's centre."""
    pri = spec.priors
    if pri.has_a:  # only with log slopes, α = log a
        grad[:, ALPHA] += -1.0 - (coords[:, ALPHA] - pri.a_meanlog) / pri.a_sdlog**2  # type: ignore[operator]
        info[:, ALPHA, ALPHA] += 1.0 / pri.a_sdlog**2  # type: ignore[operator]
    if pri.has_b:
        # b = −δ/a: ∂b/∂δ = −1/a; ∂b/∂α = −b (log slope) or −b/a (raw slope).
        db = zeros(grad.shape, like=grad)
        db[:, DELTA] = -1.0 / a
        db[:, ALPHA] = -b if spec.log_slope else -b / a
        resid = -(b - pri.b_mean) / pri.b_sd**2  # type: ignore[operator]
        grad += resid[:, None] * db
        info += db[:, :, None] * db[:, None, :] / pri.b_sd**2  # type: ignore[operator]
        if exact:
            # Second derivatives of b: log slope b = −δe^{−α}: b_αα = b, b_αδ = 1/a;
            # raw slope b = −δ/a: b_aa = 2b/a², b_aδ = 1/a².
            b_aa = b if spec.log_slope else 2 * b / a**2
            b_ad = 1 / a if spec.log_slope else 1 / a**2
            scale = (b - pri.b_mean) / pri.b_sd**2  # type: ignore[operator]
            info[:, ALPHA, ALPHA] += scale * b_aa
            info[:, ALPHA, DELTA] += scale * b_ad
            info[:, DELTA, ALPHA] += scale * b_ad
    if pri.has_c:
        al, be = pri.c_alpha, pri.c_beta
        grad[:, GAMMA] += (al - 1) * (1 - c) - (be - 1) * c  # type: ignore[operator]
        info[:, GAMMA, GAMMA] += (al + be - 2) * c * (1 - c)  # type: ignore[operator]
    if pri.has_d:
        al, be = pri.d_alpha, pri.d_beta
        grad[:, LAMBDA] += (al - 1) * (1 - d) - (be - 1) * d  # type: ignore[operator]
        info[:, LAMBDA, LAMBDA] += (al + be - 2) * d * (1 - d)  # type: ignore[operator]
