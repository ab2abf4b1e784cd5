"""The M-step of Bock–Aitkin EM: Fisher scoring for all items at once.

Items are optimised in slope–intercept coordinates, which are far better conditioned than
(a, b) when a is small:

    z = a θ + δ      (b = −δ / a)
    a = exp(α) when a has a log-normal prior (it must stay positive), else a = α
    c = σ(γ), d = σ(λ)  (logits keep the asymptotes strictly inside (0, 1))

The objective of item j is its expected complete-data log-likelihood given the E-step's
counts, plus its log prior density in (a, b, c, d). Every quantity is an array over items,
so one Newton step for 10,000 items is a handful of (J, Q) array operations. In the 1PL
the slope is shared: it gets its own one-dimensional step after the intercepts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from irt.models import ModelKind, log_prob_pair
from irt.priors import ItemPriors
from irt.types import FloatArray

# Bounds on the internal coordinates: c and d never reach 0 or 1, slopes stay finite.
LOGIT_BOUND = 12.0
LOG_SLOPE_BOUNDS = (-5.0, 3.5)
RAW_SLOPE_BOUND = 30.0
INTERCEPT_BOUND = 60.0
MAX_STEP = 2.0
_EPS = 1e-12

ALPHA, DELTA, GAMMA, LAMBDA = 0, 1, 2, 3


@dataclass(frozen=True)
class MStepSpec:
    """What the M-step estimates: the model, the priors and the grid."""

    model: ModelKind
    priors: ItemPriors
    theta: FloatArray  # (Q,) quadrature points

    @property
    def log_slope(self) -> bool:
        return self.priors.has_a

    @property
    def active(self) -> tuple[int, ...]:
        """Per-item coordinates, in column order of the coordinate array."""
        if self.model is ModelKind.ONE_PL:
            return (DELTA,)
        cols = [ALPHA, DELTA]
        if self.model.has_guessing:
            cols.append(GAMMA)
        if self.model.has_slipping:
            cols.append(LAMBDA)
        return tuple(cols)


def _sigmoid(x: FloatArray) -> FloatArray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * x)), dtype=np.float64)


def to_abcd(coords: FloatArray, spec: MStepSpec) -> tuple[FloatArray, ...]:
    """(a, b, c, d) from internal coordinates, shape (J, 4) -> four (J,) arrays."""
    a = np.exp(coords[:, ALPHA]) if spec.log_slope else coords[:, ALPHA].copy()
    b = -coords[:, DELTA] / np.where(a == 0, _EPS, a)
    c = _sigmoid(coords[:, GAMMA]) if spec.model.has_guessing else np.zeros(len(a))
    d = _sigmoid(coords[:, LAMBDA]) if spec.model.has_slipping else np.ones(len(a))
    return a, b, c, d


def from_abcd(
    a: FloatArray, b: FloatArray, c: FloatArray, d: FloatArray, spec: MStepSpec
) -> FloatArray:
    """Internal coordinates from (a, b, c, d), clipped into their bounds."""
    coords = np.zeros((len(a), 4))
    coords[:, ALPHA] = np.log(np.maximum(a, 1e-6)) if spec.log_slope else a
    coords[:, DELTA] = -a * b
    if spec.model.has_guessing:
        cc = np.clip(c, 1e-6, 1 - 1e-6)
        coords[:, GAMMA] = np.log(cc / (1 - cc))
    if spec.model.has_slipping:
        dd = np.clip(d, 1e-6, 1 - 1e-6)
        coords[:, LAMBDA] = np.log(dd / (1 - dd))
    return clip_coords(coords, spec)


def clip_coords(coords: FloatArray, spec: MStepSpec) -> FloatArray:
    out = coords.copy()
    if spec.log_slope:
        out[:, ALPHA] = np.clip(out[:, ALPHA], *LOG_SLOPE_BOUNDS)
    else:
        out[:, ALPHA] = np.clip(out[:, ALPHA], -RAW_SLOPE_BOUND, RAW_SLOPE_BOUND)
    out[:, DELTA] = np.clip(out[:, DELTA], -INTERCEPT_BOUND, INTERCEPT_BOUND)
    out[:, GAMMA] = np.clip(out[:, GAMMA], -LOGIT_BOUND, LOGIT_BOUND)
    out[:, LAMBDA] = np.clip(out[:, LAMBDA], -LOGIT_BOUND, LOGIT_BOUND)
    return out


def log_prior(coords: FloatArray, spec: MStepSpec) -> FloatArray:
    """Log prior density of each item in (a, b, c, d), up to constants; shape (J,)."""
    pri = spec.priors
    a, b, c, d = to_abcd(coords, spec)
    out = np.zeros(len(a))
    if pri.has_a:
        la = np.log(a)
        out += -la - (la - pri.a_meanlog) ** 2 / (2 * pri.a_sdlog**2)  # type: ignore[operator]
    if pri.has_b:
        out += -((b - pri.b_mean) ** 2) / (2 * pri.b_sd**2)  # type: ignore[operator]
    if pri.has_c:
        out += (pri.c_alpha - 1) * np.log(c) + (pri.c_beta - 1) * np.log1p(-c)  # type: ignore[operator]
    if pri.has_d:
        out += (pri.d_alpha - 1) * np.log(d) + (pri.d_beta - 1) * np.log1p(-d)  # type: ignore[operator]
    return out


def objective(
    coords: FloatArray, right: FloatArray, total: FloatArray, spec: MStepSpec
) -> FloatArray:
    """Expected complete-data log-likelihood plus log prior, per item; shape (J,)."""
    a, _, c, d = to_abcd(coords, spec)
    z = a[:, None] * spec.theta[None, :] + coords[:, DELTA, None]
    log_p, log_q = log_prob_pair(z, c[:, None], d[:, None])
    ll = (right * log_p + (total - right) * log_q).sum(axis=1)
    return np.asarray(ll + log_prior(coords, spec), dtype=np.float64)


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
    a, b, c, d = to_abcd(coords, spec)
    theta = spec.theta[None, :]
    s = _sigmoid(a[:, None] * theta + coords[:, DELTA, None])
    span = (d - c)[:, None]
    ds = s * (1.0 - s)
    dz = span * ds
    z_alpha = theta * (a[:, None] if spec.log_slope else 1.0)
    columns = _estimated_columns(spec)
    derivs = np.empty((len(columns), len(a), spec.theta.shape[0]))
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
        p=np.maximum(c[:, None] + span * s, _EPS),
        q=np.maximum((1.0 - d)[:, None] + span * (1.0 - s), _EPS),
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
        weight = np.maximum(total, 0.0) / pq
    grad = np.zeros((len(a), 4))
    info = np.zeros((len(a), 4, 4))
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
    _add_prior_terms(grad, info, coords, a, b, c, d, spec, exact=observed)
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


def _estimated_columns(spec: MStepSpec) -> list[int]:
    cols = [ALPHA, DELTA]
    if spec.model.has_guessing:
        cols.append(GAMMA)
    if spec.model.has_slipping:
        cols.append(LAMBDA)
    return cols


def _add_prior_terms(
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
        db = np.zeros_like(grad)
        db[:, DELTA] = -1.0 / a
        db[:, ALPHA] = -b if spec.log_slope else -b / a
        resid = -(b - pri.b_mean) / pri.b_sd**2  # type: ignore[operator]
        grad += resid[:, None] * db
        info += np.einsum("jk,jl->jkl", db, db) / pri.b_sd**2  # type: ignore[operator]
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


def _newton_direction(grad: FloatArray, info: FloatArray) -> FloatArray:
    k = grad.shape[1]
    # A small ridge keeps items with (almost) no information solvable.
    ridge = 1e-8 * np.maximum(np.trace(info, axis1=1, axis2=2) / k, 1.0)
    mat = info + ridge[:, None, None] * np.eye(k)
    step = np.linalg.solve(mat, grad[:, :, None])[:, :, 0]
    size = np.abs(step).max(axis=1, keepdims=True)
    return np.asarray(step * np.minimum(1.0, MAX_STEP / np.maximum(size, _EPS)), dtype=np.float64)


def _halving_search(
    coords: FloatArray,
    direction: FloatArray,
    current: FloatArray,
    right: FloatArray,
    total: FloatArray,
    spec: MStepSpec,
    max_halvings: int = 12,
) -> tuple[FloatArray, FloatArray]:
    """Per item, the step 2^-h · direction (largest h-free one that does not lower the
    objective), or its half where the half is better.

    Comparing with the half step stops Fisher scoring from zigzagging across a narrow
    valley — on a ridge its full step can overshoot to the far side, gaining almost
    nothing each time, for hundreds of steps.
    """
    new = coords.copy()
    best = current.copy()
    pending = np.ones(len(coords), dtype=bool)
    scale = 1.0
    for _ in range(max_halvings):
        idx = np.flatnonzero(pending)
        if idx.size == 0:
            break
        trial = clip_coords(coords[idx] + scale * direction[idx], spec)
        value = objective(trial, right[idx], total[idx], spec)
        half = clip_coords(coords[idx] + 0.5 * scale * direction[idx], spec)
        half_value = objective(half, right[idx], total[idx], spec)
        use_half = half_value > value
        trial[use_half] = half[use_half]
        value = np.where(use_half, half_value, value)
        ok = value >= current[idx]
        new[idx[ok]] = trial[ok]
        best[idx[ok]] = value[ok]
        pending[idx[ok]] = False
        scale *= 0.25
    return new, best


def m_step(
    coords: FloatArray,
    right: FloatArray,
    total: FloatArray,
    spec: MStepSpec,
    max_newton: int = 25,
    tol: float = 1e-7,
) -> FloatArray:
    """Maximise every item's objective by safeguarded Newton steps.

    Newton uses the observed curvature where it is positive definite, Fisher scoring
    elsewhere. Items are dropped from the iteration once their step is below ``tol``, so
    the few items on flat ridges get the extra steps they need without slowing the rest;
    a partial M-step there can make EM cycle. Grid points that carry no expected count
    (beyond the range of the subjects' posteriors) are left out of the work.
    """
    mass = np.abs(total).max(axis=0)
    keep = mass > 1e-12 * max(float(mass.max()), 1e-300)
    if not keep.all():
        spec = replace(spec, theta=spec.theta[keep])
        right, total = right[:, keep], total[:, keep]
    coords = coords.copy()
    active = list(spec.active)
    todo = np.arange(len(coords))
    current = objective(coords, right, total, spec)
    for _ in range(max_newton):
        sub, r, n = coords[todo], right[todo], total[todo]
        grad, info = gradient_and_information(sub, r, n, spec, observed=True)
        hess = info[np.ix_(range(len(todo)), active, active)]
        indefinite = np.linalg.eigvalsh(hess)[:, 0] <= 0
        if indefinite.any():
            _, fisher = gradient_and_information(
                sub[indefinite], r[indefinite], n[indefinite], spec
            )
            hess[indefinite] = fisher[np.ix_(range(int(indefinite.sum())), active, active)]
        direction = np.zeros_like(sub)
        direction[:, active] = _newton_direction(grad[:, active], hess)
        new, value = _halving_search(sub, direction, current[todo], r, n, spec)
        moved = np.abs(new - sub).max(axis=1)
        coords[todo], current[todo] = new, value
        if spec.model is ModelKind.ONE_PL:
            coords, current = _common_slope_step(coords, right, total, spec)
            if np.abs(moved).max() < tol:
                break
            continue
        todo = todo[moved >= tol]
        if todo.size == 0:
            break
    return coords


def _common_slope_step(
    coords: FloatArray, right: FloatArray, total: FloatArray, spec: MStepSpec
) -> tuple[FloatArray, FloatArray]:
    """One Newton step on the slope shared by all items (1PL)."""
    grad, info = gradient_and_information(coords, right, total, spec)
    g = float(grad[:, ALPHA].sum())
    h = float(info[:, ALPHA, ALPHA].sum())
    step = float(np.clip(g / max(h, _EPS), -MAX_STEP, MAX_STEP))
    base = objective(coords, right, total, spec).sum()
    for _ in range(12):
        trial = clip_coords(coords + np.array([step, 0.0, 0.0, 0.0]), spec)
        values = objective(trial, right, total, spec)
        if values.sum() >= base:
            return trial, values
        step *= 0.5
    return coords, objective(coords, right, total, spec)
