"""Item families (``irt.families``) and the one Fisher-scoring driver of the per-item
M-steps (``irt.estimation.fisher_scoring``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from irt.errors import ParamsError
from irt.estimation.fisher_scoring import MAX_STEP, Safeguards, fisher_scoring
from irt.families import FAMILIES, family_of
from irt.mirt_polytomous import MultiItemType, group_curves
from irt.polytomous import ItemType, curves
from irt.types import FloatArray, IntArray


def test_every_item_type_has_its_family_and_both_enums_share_it() -> None:
    for kinds in (ItemType, MultiItemType):
        for kind in kinds:
            assert kind.family is FAMILIES[kind.value] and kind.family.name == kind.value
    for kind in MultiItemType:
        if kind.value in ItemType.__members__.values():
            assert kind.family is ItemType(kind.value).family
    assert ItemType.THREE_PL.has_guessing and ItemType.TWO_PL.binary
    assert MultiItemType.NOMINAL.family.free_scores(4) == 3 and MultiItemType.GPCM.scored
    with pytest.raises(ParamsError, match="no item family 'rasch'"):
        family_of("rasch")


@pytest.mark.parametrize("kind", ["2PL", "graded", "gpcm"])
def test_one_theta_and_factor_curves_are_the_same_function(kind: str) -> None:
    """``curves`` at θ with slopes a is ``group_curves`` at η = aθ, to the bit."""
    rng = np.random.default_rng(3)
    m = 1 if kind == "2PL" else 3
    a, theta = rng.uniform(0.5, 2.0, 4), np.linspace(-3, 3, 7)
    d = -np.sort(rng.normal(size=(4, m)), axis=1)
    one = curves(ItemType(kind), theta, a, d, derivatives=True)
    many = group_curves(MultiItemType(kind), a[None, :] * theta[:, None], d, derivatives=True)
    for field in ("log_p", "slope", "thresholds"):
        np.testing.assert_array_equal(getattr(one, field), getattr(many, field))


@dataclass(frozen=True)
class _Quadratic:
    """Item j's objective −½ (ψ − target_j)ᵀ H (ψ − target_j), in a box [−5, 5]."""

    target: FloatArray
    hess: FloatArray

    def rows(self, items: IntArray) -> _Quadratic:
        return _Quadratic(self.target[items], self.hess)

    def objective(self, psi: FloatArray) -> FloatArray:
        diff = psi - self.target
        return np.asarray(-0.5 * np.einsum("jk,kl,jl->j", diff, self.hess, diff))

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad = -(psi - self.target) @ self.hess
        return grad, np.broadcast_to(self.hess, (len(psi), *self.hess.shape)).copy()

    def clip(self, psi: FloatArray) -> FloatArray:
        return np.clip(psi, -5.0, 5.0)


@dataclass(frozen=True)
class _Understated(_Quadratic):
    """The quadratic, with an information half its curvature: each full step lands as
    far beyond the optimum as it started before it, at the same objective."""

    def rows(self, items: IntArray) -> _Understated:
        return _Understated(self.target[items], self.hess)

    def score_and_information(self, psi: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad, info = super().score_and_information(psi)
        return grad, info / 2


def test_fisher_scoring_reaches_each_items_optimum_without_ever_falling() -> None:
    hess = np.array([[2.0, 0.5], [0.5, 1.0]])
    target = np.array([[0.3, -0.2], [4.0, -4.5], [9.0, 0.0]])  # the last beyond the box
    problem = _Quadratic(target, hess)
    start = np.zeros((3, 2))
    one = fisher_scoring(problem, start, max_steps=1, tol=1e-12)
    # One step is capped at MAX_STEP in any coordinate, and never lowers an objective.
    assert np.abs(one - start).max() <= MAX_STEP + 1e-12
    assert np.all(problem.objective(one) >= problem.objective(start))
    done = fisher_scoring(problem, start, max_steps=50, tol=1e-10)
    np.testing.assert_allclose(done[:2], target[:2], atol=1e-8)
    assert np.all(np.abs(done) <= 5.0) and done[2, 0] == 5.0


def test_comparing_each_step_with_its_half_stops_a_zigzag_across_the_optimum() -> None:
    problem = _Understated(np.array([[0.5]]), np.array([[1.0]]))
    start = np.zeros((1, 1))
    plain = fisher_scoring(problem, start, max_steps=40, tol=1e-12)
    assert abs(plain[0, 0] - 0.5) == pytest.approx(0.5)  # still zigzagging 0 ↔ 1
    halves = fisher_scoring(problem, start, 40, 1e-12, Safeguards(with_half=True))
    assert halves[0, 0] == pytest.approx(0.5, abs=1e-12)


def test_an_item_whose_next_step_is_settled_or_gains_nothing_stops_before_it() -> None:
    problem = _Quadratic(np.array([[0.3, 0.0], [1.5, 0.0]]), np.eye(2))
    start = np.zeros((2, 2))
    settled = fisher_scoring(problem, start, 5, 0.0, Safeguards(settled=0.5))
    np.testing.assert_array_equal(settled[0], start[0])  # its step (0.3) is below 0.5
    np.testing.assert_allclose(settled[1], [1.5, 0.0], atol=1e-8)
    # gradient·step is 0.09 and 2.25: a gain floor of 1 stops the first item only.
    gains = fisher_scoring(problem, start, 5, 0.0, Safeguards(min_gain=1.0))
    np.testing.assert_array_equal(gains, settled)


def test_an_item_on_its_bound_takes_the_best_step_of_the_other_coordinates() -> None:
    # The second item's optimum lies beyond the box in ψ_0 (9 > 5): given ψ_0 = 5 the
    # best ψ_1 is t_1 − H_10/H_11 (5 − t_0) = 2, not where the box cuts the full step.
    hess = np.array([[2.0, 0.5], [0.5, 1.0]])
    target = np.array([[0.3, -0.2], [9.0, 0.0]])
    done = fisher_scoring(_Quadratic(target, hess), np.array([[0.0, 0.0], [5.0, 0.0]]), 50, 1e-10)
    np.testing.assert_allclose(done, [[0.3, -0.2], [5.0, 2.0]], atol=1e-8)
