"""The M-step of Bock–Aitkin EM for binary 1–4PL items, all items at once.

Each item's objective (``irt.mstep_objective``: expected complete-data log-likelihood
given the E-step's counts, plus log prior) is maximised in the slope–intercept
coordinates of ``irt.mstep_coords``, by the safeguarded Newton steps of the one M-step
driver (``irt.estimation.fisher_scoring``). In the 1PL the slope is shared: it gets its
own one-dimensional step after each step on the intercepts.

The coordinates, the objective and its derivatives are also importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from irt.estimation.arrays import copy, empty, is_numpy, namespace, vector
from irt.estimation.fisher_scoring import MAX_STEP, Safeguards, fisher_scoring
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
from irt.types import FloatArray, IntArray

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


#: The binary items' safeguards: quarter steps, each against its half (Fisher scoring
#: zigzagged across the narrow (d, c) valleys of 3PL items few subjects answer right),
#: and a ridge of 1e-8, which sets the pace of an intercept no data bound (the ridge
#: rule of ``irt.estimation.em_loop`` names it).
_SAFEGUARDS = Safeguards(ridge=1e-8, shrink=0.25, with_half=True)


@dataclass(frozen=True)
class _OnCounts:
    """The M-step of binary items on their expected counts ``right`` and ``total``
    (J, Q): the ``irt.estimation.fisher_scoring.ItemObjective`` of the items in the
    columns of ``irt.mstep_coords`` the model estimates (ψ is (J, k)); the others, and
    the 1PL's common slope, stay as in ``base`` (J, 4). Handing the driver only these
    columns keeps its ridge on the scale of their information alone. The information
    is the observed one (Newton) where it is positive definite, Fisher's elsewhere."""

    right: FloatArray
    total: FloatArray
    spec: MStepSpec
    base: FloatArray

    def rows(self, items: IntArray) -> _OnCounts:
        return _OnCounts(self.right[items], self.total[items], self.spec, self.base[items])

    def full(self, psi: FloatArray) -> FloatArray:
        """The items' four coordinates with the estimated ones from ``psi``."""
        out = copy(self.base)
        out[:, list(self.spec.active)] = psi
        return out  # type: ignore[no-any-return]

    def objective(self, psi: FloatArray) -> FloatArray:
        return objective(self.full(psi), self.right, self.total, self.spec)

    def clip(self, psi: FloatArray) -> FloatArray:
        return clip_coords(self.full(psi), self.spec)[:, list(self.spec.active)]

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        xp = namespace(psi)
        active = list(self.spec.active)
        coords = self.full(psi)
        grad, info = gradient_and_information(coords, self.right, self.total, self.spec, True)
        hess = info[:, active][:, :, active]
        indefinite = xp.linalg.eigvalsh(hess)[:, 0] <= 0
        if bool(xp.any(indefinite)):
            _, fisher = gradient_and_information(
                coords[indefinite], self.right[indefinite], self.total[indefinite], self.spec
            )
            hess[indefinite] = fisher[:, active][:, :, active]
        return grad[:, active], hess


def _newton_steps(
    coords: FloatArray,
    right: FloatArray,
    total: FloatArray,
    spec: MStepSpec,
    max_newton: int,
    tol: float,
) -> FloatArray:
    """``m_step`` on the nodes kept, for the items given: safeguarded Newton steps
    (``irt.estimation.fisher_scoring``), in the 1PL each followed by a step on the
    common slope."""
    active = list(spec.active)
    if spec.model is not ModelKind.ONE_PL:
        problem = _OnCounts(right, total, spec, coords)
        found = fisher_scoring(problem, coords[:, active], max_newton, tol, _SAFEGUARDS)
        return problem.full(found)
    xp = namespace(coords)
    for _ in range(max_newton):
        problem = _OnCounts(right, total, spec, coords)
        new = problem.full(fisher_scoring(problem, coords[:, active], 1, tol, _SAFEGUARDS))
        moved = float(xp.max(xp.abs(new - coords)))
        coords, _ = _common_slope_step(new, right, total, spec)
        if moved < tol:
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
