"""The M-step of Bock–Aitkin EM: Fisher scoring for all items at once.

Each item's objective (``irt.mstep_objective``: expected complete-data log-likelihood
given the E-step's counts, plus log prior) is maximised in the slope–intercept
coordinates of ``irt.mstep_coords``, by safeguarded Newton steps taken for all items at
once. In the 1PL the slope is shared: it gets its own one-dimensional step after the
intercepts.

The coordinates, the objective and its derivatives are also importable from here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from irt.estimation.arrays import (
    arange,
    copy,
    empty,
    eye,
    is_numpy,
    namespace,
    trues,
    vector,
    zeros,
)
from irt.families.coordinates import INTERCEPT_BOUND, LOG_SLOPE_BOUNDS, LOGIT_BOUND, RAW_SLOPE_BOUND
from irt.models import ModelKind
from irt.mstep_coords import (
    ALPHA,
    DELTA,
    EPS,
    GAMMA,
    LAMBDA,
    MStepSpec,
    clip_coords,
    from_abcd,
    to_abcd,
)
from irt.mstep_objective import GridCurves, gradient_and_information, grid_curves, objective
from irt.mstep_priors import log_prior
from irt.types import FloatArray

__all__ = [
    "ALPHA",
    "DELTA",
    "GAMMA",
    "INTERCEPT_BOUND",
    "LAMBDA",
    "LOGIT_BOUND",
    "LOG_SLOPE_BOUNDS",
    "MAX_STEP",
    "RAW_SLOPE_BOUND",
    "GridCurves",
    "MStepSpec",
    "clip_coords",
    "from_abcd",
    "gradient_and_information",
    "grid_curves",
    "log_prior",
    "m_step",
    "objective",
    "to_abcd",
]

#: Largest Newton step in any internal coordinate.
MAX_STEP = 2.0


def _newton_direction(grad: FloatArray, info: FloatArray) -> FloatArray:
    xp = namespace(grad)
    k = grad.shape[1]
    # A small ridge keeps items with (almost) no information solvable.
    trace = sum(info[:, i, i] for i in range(k))
    ridge = 1e-8 * xp.clip(trace / k, 1.0, None)
    mat = info + ridge[:, None, None] * eye(k, like=grad)
    step = xp.linalg.solve(mat, grad[:, :, None])[:, :, 0]
    size = xp.max(xp.abs(step), axis=1, keepdims=True)
    return step * xp.clip(MAX_STEP / xp.clip(size, EPS, None), None, 1.0)  # type: ignore[no-any-return]


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
    xp = namespace(coords)
    new = copy(coords)
    best = copy(current)
    pending = trues(coords.shape[0], like=coords)
    scale = 1.0
    for _ in range(max_halvings):
        idx = xp.nonzero(pending)[0]
        if idx.shape[0] == 0:
            break
        trial = clip_coords(coords[idx] + scale * direction[idx], spec)
        value = objective(trial, right[idx], total[idx], spec)
        half = clip_coords(coords[idx] + 0.5 * scale * direction[idx], spec)
        half_value = objective(half, right[idx], total[idx], spec)
        use_half = half_value > value
        trial[use_half] = half[use_half]
        value = xp.where(use_half, half_value, value)
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
    xp = namespace(coords)
    mass = xp.max(xp.abs(total), axis=0)
    keep = mass > 1e-12 * max(float(xp.max(mass)), 1e-300)
    if not bool(xp.all(keep)):
        spec = replace(spec, theta=spec.theta[keep])
        right, total = right[:, keep], total[:, keep]
    per_chunk = max(1, _CHUNK_CELLS // max(1, right.shape[1]))
    if spec.model is ModelKind.ONE_PL or not is_numpy(coords) or coords.shape[0] <= per_chunk:
        return _newton_steps(coords, right, total, spec, max_newton, tol)
    # Items are maximised independently (but in the 1PL, whose slope they share), so a
    # long test goes through in chunks of items whose (items x nodes) temporaries stay
    # in the processor's cache; torch, which pays for every operation, takes them at once.
    out = empty(coords.shape, like=coords)
    for lo in range(0, coords.shape[0], per_chunk):
        items = slice(lo, lo + per_chunk)
        out[items] = _newton_steps(coords[items], right[items], total[items], spec, max_newton, tol)
    return out  # type: ignore[no-any-return]


#: (items x nodes) cells of one chunk of the M-step on the host: a 30,000-item test in
#: one piece (14 MB a temporary) ran its M-step 1.4 times slower.
_CHUNK_CELLS = 2**16


def _newton_steps(
    coords: FloatArray,
    right: FloatArray,
    total: FloatArray,
    spec: MStepSpec,
    max_newton: int,
    tol: float,
) -> FloatArray:
    """``m_step`` on the nodes kept, for the items given."""
    xp = namespace(coords)
    coords = copy(coords)
    active = list(spec.active)
    todo = arange(coords.shape[0], like=coords)
    current = objective(coords, right, total, spec)
    for _ in range(max_newton):
        sub, r, n = coords[todo], right[todo], total[todo]
        grad, info = gradient_and_information(sub, r, n, spec, observed=True)
        hess = info[:, active][:, :, active]
        indefinite = xp.linalg.eigvalsh(hess)[:, 0] <= 0
        if bool(xp.any(indefinite)):
            _, fisher = gradient_and_information(
                sub[indefinite], r[indefinite], n[indefinite], spec
            )
            hess[indefinite] = fisher[:, active][:, :, active]
        direction = zeros(sub.shape, like=sub)
        direction[:, active] = _newton_direction(grad[:, active], hess)
        new, value = _halving_search(sub, direction, current[todo], r, n, spec)
        moved = xp.max(xp.abs(new - sub), axis=1)
        coords[todo], current[todo] = new, value
        if spec.model is ModelKind.ONE_PL:
            coords, current = _common_slope_step(coords, right, total, spec)
            if float(xp.max(moved)) < tol:
                break
            continue
        todo = todo[moved >= tol]
        if todo.shape[0] == 0:
            break
    return coords


def _common_slope_step(
    coords: FloatArray, right: FloatArray, total: FloatArray, spec: MStepSpec
) -> tuple[FloatArray, FloatArray]:
    """One Newton step on the slope shared by all items (1PL)."""
    grad, info = gradient_and_information(coords, right, total, spec)
    g = float(grad[:, ALPHA].sum())
    h = float(info[:, ALPHA, ALPHA].sum())
    step = float(np.clip(g / max(h, EPS), -MAX_STEP, MAX_STEP))
    base = float(objective(coords, right, total, spec).sum())
    for _ in range(12):
        trial = clip_coords(coords + vector([step, 0.0, 0.0, 0.0], like=coords), spec)
        values = objective(trial, right, total, spec)
        if float(values.sum()) >= base:
            return trial, values
        step *= 0.5
    return coords, objective(coords, right, total, spec)
