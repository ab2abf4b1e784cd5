"""What the M-step maximises, item by item, and its derivatives.

The objective of item j is its expected complete-data log-likelihood given the E-step's
counts, plus its log prior density in (a, b, c, d). Every quantity is an array over items,
so the gradient and information of 10,000 items are a handful of (J, Q) array operations.
Coordinates are those of ``irt.mstep_coords``.
"""

from __future__ import annotations

from dataclasses import dataclass

from irt.estimation.arrays import empty, namespace, zeros
from irt.families.coordinates import sigmoid
from irt.models import log_prob_pair
from irt.mstep_coords import ALPHA, DELTA, EPS, GAMMA, LAMBDA, MStepSpec, estimated_columns, to_abcd
from irt.mstep_priors import add_prior_terms, log_prior
from irt.types import FloatArray


def objective(
    coords: FloatArray, right: FloatArray, total: FloatArray, spec: MStepSpec
) -> FloatArray:
    """Expected complete-data log-likelihood plus log prior, per item; shape (J,)."""
    a, _, c, d = to_abcd(coords, spec)
    z = a[:, None] * spec.theta[None, :] + coords[:, DELTA, None]
    log_p, log_q = log_prob_pair(z, c[:, None], d[:, None])
    ll = (right * log_p + (total - right) * log_q).sum(axis=1)
    return ll + log_prior(coords, spec)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class GridCurves:
    """Each item's response curve on the grid and its derivatives, shape (J, Q) each."""

    a: FloatArray
    b: FloatArray
    c: FloatArray
    d: FloatArray
    s: FloatArray  # σ(z)
    ds: FloatArray  # σ(z)(1 − σ(z))
    p: FloatArray  # P, kept ≥ 1e-12
    q: FloatArray  # 1 − P, kept ≥ 1e-12
    span: FloatArray  # d − c, shape (J, 1)
    z_alpha: FloatArray  # ∂z/∂α
    columns: list[int]  # the coordinates with a derivative below
    derivs: FloatArray  # ∂P/∂η, shape (len(columns), J, Q)


def grid_curves(coords: FloatArray, spec: MStepSpec) -> GridCurves:
    """P, 1 − P and ∂P/∂η (η the internal coordinates) at every grid point."""
    xp = namespace(coords)
    a, b, c, d = to_abcd(coords, spec)
    theta = spec.theta[None, :]
    s = sigmoid(a[:, None] * theta + coords[:, DELTA, None])
    span = (d - c)[:, None]
    ds = s * (1.0 - s)
    dz = span * ds
    z_alpha = theta * (a[:, None] if spec.log_slope else 1.0)
    columns = estimated_columns(spec)
    derivs = empty((len(columns), a.shape[0], spec.theta.shape[0]), like=coords)
    for k, col in enumerate(columns):
        if col == ALPHA:
            derivs[k] = dz * z_alpha
        elif col == DELTA:
            derivs[k] = dz
        elif col == GAMMA:
            derivs[k] = (1.0 - s) * (c * (1 - c))[:, None]
        else:
            derivs[k] = s * (d * (1 - d))[:, None]
    return GridCurves(
        a=a,
        b=b,
        c=c,
        d=d,
        s=s,
        ds=ds,
        p=xp.clip(c[:, None] + span * s, EPS, None),
        q=xp.clip((1.0 - d)[:, None] + span * (1.0 - s), EPS, None),
        span=span,
        z_alpha=z_alpha,
        columns=columns,
        derivs=derivs,
    )


def gradient_and_information(
    coords: FloatArray,
    right: FloatArray,
    total: FloatArray,
    spec: MStepSpec,
    observed: bool = False,
) -> tuple[FloatArray, FloatArray]:
    """Gradient (J, 4) and information (J, 4, 4) of the objective in internal coordinates;
    rows and columns of coordinates the model does not estimate are zero.

    The information is the expected one (Fisher scoring), or with ``observed`` the
    negative Hessian of the likelihood part, which makes Newton converge quadratically
    where few subjects put the counts on a few grid points and the two differ.
    """
    curves = grid_curves(coords, spec)
    a, b, c, d = curves.a, curves.b, curves.c, curves.d
    s, ds, p, q, span, z_alpha = (
        curves.s,
        curves.ds,
        curves.p,
        curves.q,
        curves.span,
        curves.z_alpha,
    )
    cols = curves.columns
    derivs = curves.derivs
    pq = p * q
    resid = (right - total * p) / pq
    if observed:
        wrong = total - right
        weight = right / p**2 + wrong / q**2
        curv = right / p - wrong / q
    else:
        # Interpolated E-step counts can be slightly negative at a grid point; the step
        # direction needs a positive-definite information, the line search does the rest.
        weight = namespace(total).clip(total, 0.0, None) / pq
    grad = zeros((a.shape[0], 4), like=coords)
    info = zeros((a.shape[0], 4, 4), like=coords)
    weighted = derivs * weight
    for k, col in enumerate(cols):
        grad[:, col] = (resid * derivs[k]).sum(axis=1)
        for k2, col2 in enumerate(cols[: k + 1]):
            value = (weighted[k] * derivs[k2]).sum(axis=1)
            if observed:
                second = _second_derivative(col, col2, s, ds, span, z_alpha, c, d, spec)
                if second is not None:
                    value -= (curv * second).sum(axis=1)
            info[:, col, col2] = info[:, col2, col] = value
    add_prior_terms(grad, info, coords, a, b, c, d, spec, exact=observed)
    return grad, info


def _second_derivative(
    k: int,
    k2: int,
    s: FloatArray,
    ds: FloatArray,
    span: FloatArray,
    z_alpha: FloatArray,
    c: FloatArray,
    d: FloatArray,
    spec: MStepSpec,
) -> FloatArray | None:
    """∂²P / ∂η_k ∂η_l on the grid, or None where it is zero."""
    pair = {k, k2}
    d2s = ds * (1.0 - 2.0 * s)
    gc = (c * (1 - c))[:, None]
    gd = (d * (1 - d))[:, None]
    if pair == {ALPHA}:
        out = span * d2s * z_alpha**2
        return out + span * ds * z_alpha if spec.log_slope else out
    if pair == {ALPHA, DELTA}:
        return span * d2s * z_alpha
    if pair == {DELTA}:
        return span * d2s
    if pair == {ALPHA, GAMMA}:
        return -ds * z_alpha * gc
    if pair == {DELTA, GAMMA}:
        return -ds * gc
    if pair == {GAMMA}:
        return (1.0 - s) * gc * (1 - 2 * c)[:, None]
    if pair == {ALPHA, LAMBDA}:
        return ds * z_alpha * gd
    if pair == {DELTA, LAMBDA}:
        return ds * gd
    if pair == {LAMBDA}:
        return s * gd * (1 - 2 * d)[:, None]
    return None
