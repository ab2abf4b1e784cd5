"""The item that most narrows the predicted accuracy difference of two models.

The quantity of interest is Δ = acc(θ_A) − acc(θ_B), acc(θ) the predicted full-pool
accuracy (the plug-in: answers given, P_j(θ) on the rest). By the delta method,

    Var(Δ̂) ≈ g_A² / T_A + g_B² / T_B,      g = d acc/dθ at θ̂,

T the information about each θ so far (test information at θ̂ plus the prior's precision,
1 for the N(0, 1) prior the estimator falls back on). Both models answer item j, which
adds I_j(θ_A) to T_A and I_j(θ_B) to T_B, so Var(Δ̂) drops by

    g_A² I_j(θ_A) / (T_A (T_A + I_j(θ_A)))  +  g_B² I_j(θ_B) / (T_B (T_B + I_j(θ_B))),

and the item of largest drop is asked next. This is sequential c-optimal design: the
variance of one linear combination cᵀβ of the parameters is minimised, c = (g_A, −g_B)
here (Elfving 1952, Ann. Math. Stat. 23; Silvey 1980, *Optimal Design*, ch. 3); with the
prior's precision in T it is the Bayesian criterion of Chaloner & Verdinelli (1995,
Statist. Sci. 10) and of van der Linden (1998, Psychometrika 63) for adaptive testing.
It prefers items informative at both θ̂ and, when one model's θ is already the better
known (larger T) or moves the accuracy less (smaller g), items where the other is
informative. An item's answer also removes its own Bernoulli chance from the unseen part,
a term of order 1/N² against the θ terms' 1/(N·n): left out.

``DifferencePolicy`` is a ``cat.engine.selection.SelectionPolicy``, so that
``ContentBalanced`` keeps the pool's mix of scenarios around it as around the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.engine.selection import IntArray, PoolInfo, SelectionState
from cat.errors import CatError
from irt.types import FloatArray


def variance_drop(
    info_a: FloatArray,
    info_b: FloatArray,
    slopes: tuple[float, float],
    totals: tuple[float, float],
) -> FloatArray:
    """Per item: how much asking it lowers Var(Δ̂), from its information at θ̂_A
    (``info_a``) and at θ̂_B, the slopes g = d acc/dθ and the information so far T."""
    (g_a, g_b), (t_a, t_b) = slopes, totals
    a = np.asarray(info_a, dtype=np.float64)
    b = np.asarray(info_b, dtype=np.float64)
    return np.asarray(g_a**2 * a / (t_a * (t_a + a)) + g_b**2 * b / (t_b * (t_b + b)))


@dataclass(frozen=True)
class DifferencePolicy:
    """The available item of largest ``variance_drop`` at the two current estimates.

    ``state.theta`` is not read: the state is the pair's, and the θs are the fields."""

    theta_a: float
    theta_b: float
    slope_a: float
    slope_b: float
    total_a: float
    total_b: float

    def __post_init__(self) -> None:
        if not (self.total_a > 0 and self.total_b > 0):
            raise CatError("the information so far must be positive (the prior gives 1)")

    def select(self, pool: PoolInfo, state: SelectionState, rng: np.random.Generator) -> IntArray:
        info = pool.at(np.array([self.theta_a, self.theta_b]))
        drop = variance_drop(
            info[0], info[1], (self.slope_a, self.slope_b), (self.total_a, self.total_b)
        )
        keys = np.where(state.available, drop[None, :], -np.inf)
        return np.asarray(keys.argmax(axis=1), dtype=np.int_)
