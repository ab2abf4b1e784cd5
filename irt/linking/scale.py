"""Scale linking: put a new calibration on an old calibration's θ scale.

Two calibrations of the same (anchor) items differ by a linear change of scale,
θ_old = A·θ_new + B, under which a_old = a_new / A, b_old = A·b_new + B and c, d are
unchanged. Two estimators of (A, B) from the anchors (Kolen & Brennan, *Test Equating,
Scaling, and Linking*, 3rd ed., ch. 6):

- mean–sigma: A = sd(b_old) / sd(b_new), B = mean(b_old) − A·mean(b_new); quick, but
  it uses the difficulties only and an outlying b moves it;
- Stocking–Lord: the (A, B) that make the anchors' test characteristic curves agree,
  minimising Σ_q w_q [Σ_j P_j(θ_q; old) − Σ_j P_j(θ_q; new moved to old)]² over a
  N(0, 1)-weighted grid: it uses a, b and c together and is the usual choice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import minimize

from irt.errors import IRTError
from irt.models import ItemParams, probability


@dataclass(frozen=True)
class Linking:
    """θ_old = A·θ_new + B, with the method and the anchors it came from."""

    A: float
    B: float
    method: str
    n_anchors: int

    def theta(self, theta_new: np.ndarray) -> np.ndarray:
        """Abilities on the new scale moved to the old one."""
        return self.A * np.asarray(theta_new, dtype=np.float64) + self.B


def transform(params: ItemParams, A: float, B: float) -> ItemParams:
    """Item parameters moved by θ → A·θ + B (standard errors follow)."""
    if not A > 0:
        raise IRTError(f"the slope of a scale change must be positive, got {A}")
    return replace(
        params,
        a=params.a / A,
        b=A * params.b + B,
        se_a=None if params.se_a is None else params.se_a / A,
        se_b=None if params.se_b is None else A * params.se_b,
    )


def _anchors(old: ItemParams, new: ItemParams) -> tuple[ItemParams, ItemParams]:
    """The items both calibrations hold, in one order."""
    in_old = {item: j for j, item in enumerate(old.item_ids)}
    shared = [(in_old[i], k) for k, i in enumerate(new.item_ids) if i in in_old]
    if len(shared) < 2:
        raise IRTError(f"linking needs at least 2 anchor items in both, found {len(shared)}")
    rows = np.array(shared)
    return old.subset(rows[:, 0]), new.subset(rows[:, 1])


def mean_sigma(old: ItemParams, new: ItemParams) -> Linking:
    """Mean–sigma linking on the anchors' difficulties."""
    o, n = _anchors(old, new)
    sd_new = float(np.std(n.b))
    if sd_new <= 0:
        raise IRTError("the anchors' difficulties do not vary: mean–sigma is undefined")
    A = float(np.std(o.b)) / sd_new
    return Linking(A, float(np.mean(o.b) - A * np.mean(n.b)), "mean-sigma", len(o.item_ids))


def stocking_lord(old: ItemParams, new: ItemParams, n_points: int = 41) -> Linking:
    """Stocking–Lord linking, started from mean–sigma."""
    o, n = _anchors(old, new)
    grid = np.linspace(-4.0, 4.0, n_points)
    weight = np.exp(-0.5 * grid**2)
    weight /= weight.sum()
    target = probability(grid, o).sum(axis=1)
    start = mean_sigma(o, n)

    def loss(x: np.ndarray) -> float:
        A, B = float(np.exp(x[0])), float(x[1])  # log A keeps the slope positive
        moved = probability(grid, transform(n, A, B)).sum(axis=1)
        return float(np.sum(weight * (target - moved) ** 2))

    fit = minimize(
        loss,
        x0=np.array([np.log(start.A), start.B]),
        method="Nelder-Mead",
        options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 2000},
    )
    if not fit.success:
        raise IRTError(f"Stocking–Lord linking did not converge: {fit.message}")
    return Linking(float(np.exp(fit.x[0])), float(fit.x[1]), "stocking-lord", len(o.item_ids))
