"""The M-step of the multidimensional polytomous EM for one group of like items:
Fisher scoring on Σ_qk r_jkq log P_jk(θ_q) in internal coordinates ψ, vectorised over
the group's items, on the nodes θ_q of whatever grid the E-step used (the full product
grid, or a bifactor model's (general, specific) plane).

An item's ψ row is (a_1..a_D, δ_1..δ_m, ak_1..ak_{m−1}): the slopes over the grid's D
dimensions (a slope outside the loading pattern is fixed: zero gradient, unit row in
the information, hence a zero step), then the item family's own coordinates
(``irt.families.base.ItemFamily.to_internal``, as on one θ): the thresholds, graded
ones as log-gaps so they stay ordered, and a nominal item's free scoring values. The
expected information Σ_q n_jq Σ_k P_jk v vᵀ (v = ∂ log P_jk/∂ψ) is positive
semi-definite anywhere, and a step that lowers an item's objective is halved until it
does not, so each cycle is a generalised EM step (Dempster, Laird & Rubin 1977).

The gradient is also, summed over the E-step's counts, the gradient of the marginal
log-likelihood (Fisher's identity): the tests check it against finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.estimation.fisher_scoring import fisher_scoring
from irt.families.base import ItemValues
from irt.families.coordinates import RAW_SLOPE_BOUND
from irt.mirt_polytomous import CategoryGroup, group_curves
from irt.types import BoolArray, FloatArray, IntArray

__all__ = ["GroupCoordinates", "group_m_step", "group_objective", "group_score"]


@dataclass(frozen=True)
class GroupCoordinates:
    """How a group's ψ rows split: ``n_dims`` slopes, m thresholds, free ak; ``free``
    (J_g, width) marks the coordinates that move."""

    group: CategoryGroup
    n_dims: int
    free: BoolArray

    @property
    def m(self) -> int:
        return self.group.m

    @property
    def width(self) -> int:
        return self.n_dims + self.group.kind.family.width(self.m)

    @classmethod
    def of(cls, group: CategoryGroup, pattern: BoolArray) -> GroupCoordinates:
        """From the group's local loading pattern (J_g, D)."""
        rest = np.ones((pattern.shape[0], group.m + group.n_free_ak), dtype=bool)
        return cls(group, pattern.shape[1], np.hstack([pattern, rest]))

    def to_psi(self, slopes: FloatArray, d: FloatArray, ak: FloatArray | None) -> FloatArray:
        """ψ (J_g, width) of slopes (J_g, D), thresholds (J_g, m), scoring values (J_g, m)."""
        psi = np.zeros((slopes.shape[0], self.width))
        psi[:, : self.n_dims] = slopes
        values = ItemValues(d, np.zeros(slopes.shape[0]), ak)
        psi[:, self.n_dims :] = self.group.kind.family.to_internal(values)
        return self.clip(psi)

    def natural(self, psi: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """(slopes, d, ak) of ψ; ak is None for 2PL and graded items."""
        dims = self.n_dims
        slopes = np.where(self.free[:, :dims], psi[:, :dims], 0.0)
        values = self.group.kind.family.to_natural(psi[:, dims:], self.m)
        return slopes, values.d, values.ak

    def clip(self, psi: FloatArray) -> FloatArray:
        """A copy of ψ with every coordinate in its box and fixed slopes at 0."""
        out = psi.copy()
        dims = self.n_dims
        out[:, :dims] = np.where(
            self.free[:, :dims], np.clip(out[:, :dims], -RAW_SLOPE_BOUND, RAW_SLOPE_BOUND), 0.0
        )
        out[:, dims:] = self.group.kind.family.clip(psi[:, dims:], self.m)
        return out

    def jacobian(self, psi: FloatArray) -> FloatArray:
        """∂(d_1..d_m, ak_free)/∂ψ per item of the family's coordinates, (J_g, w, w)."""
        return self.group.kind.family.jacobian(psi[:, self.n_dims :], self.m)


def _row_subset(coords: GroupCoordinates, rows: IntArray) -> GroupCoordinates:
    return GroupCoordinates(coords.group, coords.n_dims, coords.free[rows])


def group_objective(
    coords: GroupCoordinates, psi: FloatArray, r: FloatArray, points: FloatArray
) -> FloatArray:
    """Σ_qk r_qjk log P_jk(θ_q) per item; ``r`` (Q, J_g, K), ``points`` (Q, D)."""
    slopes, d, ak = coords.natural(psi)
    log_p = group_curves(coords.group.kind, points @ slopes.T, d, ak).log_p
    # 0 · log 0 = 0 where an empty category has probability 0.
    return np.asarray(np.einsum("qjk,qjk->j", r, np.where(r > 0, log_p, 0.0)))


def group_score(
    coords: GroupCoordinates, psi: FloatArray, r: FloatArray, points: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The objective's gradient (J_g, width) and expected information (J_g, width,
    width) in ψ, both zero in fixed coordinates."""
    slopes, d, ak = coords.natural(psi)
    cv = group_curves(coords.group.kind, points @ slopes.T, d, ak, derivatives=True)
    assert cv.slope is not None and cv.thresholds is not None
    family = coords.group.kind.family
    parts = [
        points[:, None, None, :] * cv.slope[..., None],
        np.einsum("qjkl,jlm->qjkm", family.derivatives(cv), coords.jacobian(psi)),
    ]
    v = np.concatenate(parts, axis=-1)  # (Q, J_g, K, width)
    grad = np.einsum("qjk,qjkl->jl", r, v)
    weight = r.sum(axis=2, keepdims=True) * np.exp(cv.log_p)  # n_qj P_qjk
    info = np.einsum("qjk,qjkl,qjkm->jlm", weight, v, v)
    free = coords.free
    grad = np.where(free, grad, 0.0)
    both = free[:, :, None] & free[:, None, :]
    info = np.where(both, info, 0.0)
    return grad, info


def group_m_step(
    coords: GroupCoordinates,
    psi: FloatArray,
    r: FloatArray,
    points: FloatArray,
    steps: int,
    tol: float = 1e-9,
) -> FloatArray:
    """Up to ``steps`` safeguarded Fisher-scoring steps (``irt.estimation.fisher_scoring``)
    from ``psi``; an item stops once its step is below ``tol``."""
    return fisher_scoring(_OnCounts(coords, r, points), psi, steps, tol)


@dataclass(frozen=True)
class _OnCounts:
    """A group's objective on its expected counts ``r`` (Q, J_g, K) at ``points``: the
    ``irt.estimation.fisher_scoring.ItemObjective`` of its items."""

    coords: GroupCoordinates
    r: FloatArray
    points: FloatArray

    def rows(self, items: IntArray) -> _OnCounts:
        return _OnCounts(_row_subset(self.coords, items), self.r[:, items], self.points)

    def objective(self, psi: FloatArray) -> FloatArray:
        return group_objective(self.coords, psi, self.r, self.points)

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad, info = group_score(self.coords, psi, self.r, self.points)
        # Fixed coordinates get a unit row, hence a zero step.
        eye = np.eye(self.coords.width)
        return grad, info + (~self.coords.free)[:, :, None] * eye[None]

    def clip(self, psi: FloatArray) -> FloatArray:
        return self.coords.clip(psi)
