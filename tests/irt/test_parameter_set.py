"""Every parameter class is an ``irt.ParameterSet`` and its answers agree with the free
functions and methods it delegates to (issue 29, "One parameter interface")."""

from __future__ import annotations

import numpy as np
import pytest

import irt
from irt import models
from irt.bifactor_model import BifactorParams
from irt.continuous import ContinuousParams
from irt.fit.persons import lz, lz_scored
from irt.mirt_estep import item_log_probs
from irt.mirt_model import MirtParams, Structure
from irt.mirt_polytomous import MirtPolytomousParams
from irt.mixed import MixedParams
from irt.models import ItemParams, information, log_likelihood, probability
from irt.parameter_set import ParameterSet
from irt.polytomous import PolytomousParams

ITEM = ItemParams.create(
    a=[1.2, 0.8, 1.5, 2.0],
    b=[-0.5, 0.3, 1.0, -1.2],
    c=[0.0, 0.2, 0.1, 0.05],
    d=[1.0, 1.0, 0.95, 1.0],
    item_ids=["b1", "b2", "b3", "b4"],
    model="4pl",
)
POLY = PolytomousParams.create(
    ["graded", "gpcm", "2PL", "3PL", "sequential"],
    a=[1.1, 0.7, 1.4, 1.0, 0.9],
    d=[[1.0, -0.5], [0.4, -0.2, 0.1], [0.3], [-0.2], [0.5, 0.0]],
    c=[0.0, 0.0, 0.0, 0.2, 0.0],
    item_ids=["p1", "p2", "p3", "p4", "p5"],
)
CONT = ContinuousParams.create(
    ["crm", "beta", "crm"],
    a=[1.1, 0.7, 1.3],
    d=[0.2, -0.3, 0.5],
    dispersion=[0.8, 2.0, 1.2],
    item_ids=["c1", "c2", "c3"],
)
MIXED = MixedParams(discrete=POLY.subset(["p1", "p2", "p3"]), continuous=CONT.subset([0, 1]))
MIRT = MirtParams(
    item_ids=("m1", "m2", "m3", "m4"),
    slopes=np.array([[1.2, 0.0], [0.8, 0.5], [0.0, 1.4], [0.6, 0.9]]),
    d=np.array([0.3, -0.4, 0.1, 0.8]),
    factors=("F1", "F2"),
    correlation=np.array([[1.0, 0.3], [0.3, 1.0]]),
    pattern=np.array([[True, False], [True, True], [False, True], [True, True]]),
    structure=Structure.CONFIRMATORY,
    c=np.array([0.0, 0.15, 0.1, 0.2]),
)
MIRT_POLY = MirtPolytomousParams.create(
    ["graded", "gpcm", "nominal", "2PL"],
    slopes=[[1.0, 0.0], [0.6, 0.8], [0.9, 0.4], [0.0, 1.3]],
    d=[[0.8, -0.6], [0.2, -0.1], [0.5, 0.1, -0.3], [0.4]],
    ak=[[], [], [0.7, 1.6, 3.0], []],
    item_ids=["q1", "q2", "q3", "q4"],
)
BIFACTOR = BifactorParams(
    item_ids=("f1", "f2", "f3", "f4", "f5"),
    a_general=np.array([1.0, 1.3, 0.8, 1.1, 0.9]),
    a_specific=np.array([0.6, 0.9, 0.0, 0.7, 0.5]),
    d=np.array([0.2, -0.5, 0.4, 0.0, -0.2]),
    group=np.array([0, 0, -1, 1, 1]),
    groups=("s1", "s2"),
    c=np.array([0.1, 0.0, 0.2, 0.1, 0.05]),
)

ALL: dict[str, ParameterSet] = {
    "binary": ITEM,
    "polytomous": POLY,
    "continuous": CONT,
    "mixed": MIXED,
    "mirt": MIRT,
    "mirt_polytomous": MIRT_POLY,
    "bifactor": BIFACTOR,
}
SCORED = {"polytomous", "continuous", "mixed", "mirt_polytomous"}
THETA_1D = np.array([-1.5, 0.0, 0.7, 2.2])


def theta_for(params: ParameterSet) -> np.ndarray:
    """Four abilities on one trait, or four points on the set's dimensions."""
    if params.n_dimensions == 1 and params.family not in ("mirt", "mirt_polytomous"):
        return THETA_1D
    rng = np.random.default_rng(3)
    return rng.normal(size=(4, params.n_dimensions))


def some_responses(params: ParameterSet, n: int, seed: int) -> np.ndarray:
    """(n, J) responses drawn from the model at ``theta_for``'s first n points, with
    one cell in three missing."""
    rng = np.random.default_rng(seed)
    theta = theta_for(params)[:n]
    rows = np.repeat(np.arange(n), params.n_items)
    items = np.tile(np.arange(params.n_items), n)
    x = params.draw(theta[rows], items, rng).reshape(n, params.n_items)
    x[rng.random(x.shape) < 1 / 3] = np.nan
    return x


# --- every set answers the same questions the same way ---------------------------------


def test_there_are_seven_families_one_per_class() -> None:
    assert {type(p).__name__ for p in ALL.values()} == {
        "ItemParams",
        "PolytomousParams",
        "ContinuousParams",
        "MixedParams",
        "MirtParams",
        "MirtPolytomousParams",
        "BifactorParams",
    }
    assert {name: p.family for name, p in ALL.items()} == {name: name for name in ALL}


@pytest.mark.parametrize("name", ALL)
def test_each_class_is_a_parameter_set(name: str) -> None:
    params = ALL[name]
    assert isinstance(params, ParameterSet)
    assert isinstance(params, irt.ParameterSet)  # exported from the package
    assert params.scored is (name in SCORED)
    assert len(params.item_ids) == params.n_items
    assert len(params.item_types) == params.n_items
    assert params.max_scores.shape == (params.n_items,)
    assert params.is_continuous.shape == (params.n_items,)
    assert params.is_continuous.any() == (name in ("continuous", "mixed"))


def test_a_path_or_a_number_is_not_a_parameter_set() -> None:
    assert not isinstance("params.csv", ParameterSet)
    assert not isinstance(np.ones(3), ParameterSet)


@pytest.mark.parametrize("name", ALL)
def test_probabilities_expected_score_and_variance_hang_together(name: str) -> None:
    params = ALL[name]
    theta = theta_for(params)
    prob = params.probabilities(theta)
    assert prob.shape[:2] == (4, params.n_items)
    assert np.all(prob >= 0)
    np.testing.assert_allclose(prob.sum(axis=2), 1.0, rtol=1e-12)
    k = np.arange(prob.shape[2])
    expected = params.expected_score(theta)
    np.testing.assert_allclose(expected, prob @ k, rtol=1e-12, atol=1e-15)
    assert np.all(expected <= params.max_scores + 1e-12)
    variance = params.variance(theta)
    assert variance.shape == (4, params.n_items)
    discrete = ~params.is_continuous
    own = prob @ k**2 - (prob @ k) ** 2
    np.testing.assert_allclose(variance[:, discrete], own[:, discrete], rtol=1e-10, atol=1e-15)
    # A continuous score spreads less than the two-point reading of its mean.
    assert np.all(variance[:, ~discrete] < own[:, ~discrete])


@pytest.mark.parametrize("name", ALL)
def test_information_has_one_shape_per_dimensionality(name: str) -> None:
    params = ALL[name]
    theta = theta_for(params)
    info = params.information(theta)
    d = params.n_dimensions
    if theta.ndim == 1:
        assert info.shape == (4, params.n_items)
        assert np.all(info > 0)
    else:
        assert info.shape == (4, params.n_items, d, d)
        np.testing.assert_allclose(info, np.swapaxes(info, 2, 3))
    np.testing.assert_allclose(params.test_information(theta), info.sum(axis=1))


@pytest.mark.parametrize("name", ALL)
def test_log_likelihood_sums_each_answer(name: str) -> None:
    params = ALL[name]
    theta = theta_for(params)
    x = some_responses(params, 4, seed=1)
    total = params.log_likelihood(theta, x)
    assert total.shape == (4,)
    # Item by item, one answer at a time: the terms add up to the row's total.
    by_item = np.zeros(4)
    for j in range(params.n_items):
        only = np.full_like(x, np.nan)
        only[:, j] = x[:, j]
        by_item += params.log_likelihood(theta, only)
    np.testing.assert_allclose(total, by_item, rtol=1e-12)
    # A discrete answer's term is the log of its category's probability.
    prob = params.probabilities(theta)
    for j in np.flatnonzero(~params.is_continuous):
        only = np.full_like(x, np.nan)
        only[:, j] = x[:, j]
        seen = np.isfinite(x[:, j])
        want = np.log(prob[seen, j, x[seen, j].astype(int)])
        np.testing.assert_allclose(params.log_likelihood(theta, only)[seen], want, rtol=1e-9)
    np.testing.assert_array_equal(params.log_likelihood(theta, np.full_like(x, np.nan)), 0.0)


@pytest.mark.parametrize("name", ALL)
def test_draws_average_to_the_expected_score(name: str) -> None:
    params = ALL[name]
    point = theta_for(params)[1]
    n = 20_000
    rng = np.random.default_rng(7)
    items = np.tile(np.arange(params.n_items), n)
    theta = np.repeat(point[None, ...], items.size, axis=0)
    x = params.draw(theta, items, rng).reshape(n, params.n_items)
    top = params.max_scores.astype(float)
    assert np.all((x >= 0) & (x <= top))
    whole = ~params.is_continuous
    np.testing.assert_array_equal(x[:, whole], np.round(x[:, whole]))
    sd = np.sqrt(params.variance(point[None, ...])[0] / n)
    assert np.all(np.abs(x.mean(axis=0) - params.expected_score(point[None, ...])[0]) < 5 * sd)


@pytest.mark.parametrize("name", ALL)
def test_subset_by_ids_or_positions_keeps_each_items_answers(name: str) -> None:
    params = ALL[name]
    theta = theta_for(params)
    pick = [params.n_items - 1, 0]
    by_position = params.subset(np.array(pick))
    by_id = params.subset([params.item_ids[j] for j in pick])
    assert type(by_position) is type(params)
    if name != "mixed":  # a mixed set lists its discrete items first, whatever the order
        assert by_position.item_ids == tuple(params.item_ids[j] for j in pick)
    assert by_id.item_ids == by_position.item_ids
    order = [params.item_ids.index(i) for i in by_position.item_ids]
    np.testing.assert_allclose(
        by_position.expected_score(theta), params.expected_score(theta)[:, order], rtol=1e-12
    )
    mask = np.zeros(params.n_items, dtype=bool)
    mask[pick] = True
    assert params.subset(mask).item_ids == tuple(params.item_ids[j] for j in sorted(pick))


# --- the methods agree with what they delegate to --------------------------------------


def test_binary_items_answer_as_the_free_functions() -> None:
    x = some_responses(ITEM, 4, seed=2)
    p = probability(THETA_1D, ITEM)
    np.testing.assert_array_equal(ITEM.expected_score(THETA_1D), p)
    np.testing.assert_array_equal(ITEM.probabilities(THETA_1D)[..., 1], p)
    np.testing.assert_array_equal(ITEM.variance(THETA_1D), p * (1 - p))
    np.testing.assert_array_equal(ITEM.information(THETA_1D), information(THETA_1D, ITEM))
    np.testing.assert_array_equal(
        ITEM.test_information(THETA_1D), models.test_information(THETA_1D, ITEM)
    )
    np.testing.assert_array_equal(
        ITEM.log_likelihood(THETA_1D, x), log_likelihood(x, THETA_1D, ITEM)
    )
    assert ITEM.item_types == ("4pl",) * 4
    answers, items = np.array([1.0, 0.0, 1.0]), np.array([3, 1, 0])
    assert ITEM.person_fit(0.4, items, answers) == lz(answers, 0.4, ITEM.subset(items))
    # The draw is the engine's: a uniform against P from a, b, c, d.
    rows = np.array([0, 1, 2, 3, 0])
    chosen = np.array([2, 0, 3, 1, 1])
    got = ITEM.draw(THETA_1D[rows], chosen, np.random.default_rng(5))
    z = ITEM.a[chosen] * (THETA_1D[rows] - ITEM.b[chosen])
    prob = ITEM.c[chosen] + (ITEM.d[chosen] - ITEM.c[chosen]) / (1 + np.exp(-z))
    np.testing.assert_array_equal(got, np.random.default_rng(5).random(5) < prob)


def test_scored_items_answer_as_their_methods() -> None:
    x = some_responses(POLY, 4, seed=3)
    log_p = POLY.log_probs(THETA_1D)
    want = [
        sum(log_p[t, j, int(x[t, j])] for j in range(POLY.n_items) if np.isfinite(x[t, j]))
        for t in range(4)
    ]
    np.testing.assert_allclose(POLY.log_likelihood(THETA_1D, x), want, rtol=1e-12)
    scores, items = np.array([2.0, 0.0, 1.0]), np.array([1, 3, 4])
    assert POLY.person_fit(-0.3, items, scores) == lz_scored(scores, -0.3, POLY.subset(items))
    assert POLY.max_scores.tolist() == [2, 3, 1, 1, 2]


def test_continuous_items_answer_as_their_methods() -> None:
    x = some_responses(CONT, 4, seed=4)
    np.testing.assert_array_equal(CONT.expected_score(THETA_1D), CONT.expected(THETA_1D))
    density = CONT.log_density(THETA_1D, x)
    np.testing.assert_allclose(
        CONT.log_likelihood(THETA_1D, x), np.nansum(density, axis=1), rtol=1e-12
    )
    assert np.isnan(CONT.person_fit(0.0, np.array([0, 1]), np.array([0.3, 0.8])))
    np.testing.assert_array_equal(CONT.max_scores, 1.0)


def test_a_mixed_set_answers_as_its_parts_side_by_side() -> None:
    disc, cont = MIXED.discrete, MIXED.continuous
    assert disc is not None and cont is not None
    for method in ("expected_score", "variance", "information"):
        whole = getattr(MIXED, method)(THETA_1D)
        parts = np.hstack([getattr(disc, method)(THETA_1D), getattr(cont, method)(THETA_1D)])
        np.testing.assert_array_equal(whole, parts)
    x = some_responses(MIXED, 4, seed=6)
    n = disc.n_items
    np.testing.assert_allclose(
        MIXED.log_likelihood(THETA_1D, x),
        disc.log_likelihood(THETA_1D, x[:, :n]) + cont.log_likelihood(THETA_1D, x[:, n:]),
    )
    # lz leaves the continuous answers out; with none discrete there is none.
    items, answers = np.array([3, 0, 2, 4]), np.array([0.4, 1.0, 1.0, 0.9])
    got = MIXED.person_fit(0.2, items, answers)
    assert got == lz_scored(np.array([1.0, 1.0]), 0.2, disc.subset(np.array([0, 2])))
    assert np.isnan(MIXED.person_fit(0.2, np.array([3, 4]), np.array([0.4, 0.9])))
    assert MixedParams.of(MIXED) is MIXED
    assert MixedParams.of(POLY).discrete is POLY
    assert MixedParams.of(CONT).continuous is CONT


def test_a_multidimensional_binary_set_answers_as_its_model() -> None:
    theta = theta_for(MIRT)
    np.testing.assert_array_equal(MIRT.expected_score(theta), MIRT.probability(theta))
    x = some_responses(MIRT, 4, seed=8)
    want = []
    for t in range(4):
        log_p, log_q = item_log_probs(MIRT, theta[t : t + 1])
        seen = np.isfinite(x[t])
        want.append(np.where(x[t] == 1, log_p[:, 0], log_q[:, 0])[seen].sum())
    np.testing.assert_allclose(MIRT.log_likelihood(theta, x), want, rtol=1e-12)
    assert MIRT.item_types == ("3PL",) * 4


def test_multidimensional_information_is_the_score_outer_product() -> None:
    # I(θ) = ∇P ∇Pᵀ / (P (1 − P)) for a 0/1 item, ∇P by central differences.
    theta = theta_for(MIRT)[:1]
    info = MIRT.information(theta)[0]
    p = MIRT.probability(theta)[0]
    h = 1e-6
    grad = np.stack(
        [
            (MIRT.probability(theta + h * e) - MIRT.probability(theta - h * e))[0] / (2 * h)
            for e in np.eye(2)
        ],
        axis=1,
    )  # (J, D)
    want = grad[:, :, None] * grad[:, None, :] / (p * (1 - p))[:, None, None]
    np.testing.assert_allclose(info, want, rtol=1e-6)
    # Without guessing, the M2PL's information is that of the same items as 2PL items of
    # the multidimensional scored model.
    two_pl = MirtParams(**{**MIRT.__dict__, "c": None})
    scored = MirtPolytomousParams.create(
        "2PL", two_pl.slopes, two_pl.d[:, None], item_ids=list(two_pl.item_ids)
    )
    np.testing.assert_allclose(two_pl.information(theta), scored.information(theta), rtol=1e-12)


def test_a_multidimensional_scored_set_answers_as_its_methods() -> None:
    theta = theta_for(MIRT_POLY)
    x = some_responses(MIRT_POLY, 4, seed=9)
    log_p = MIRT_POLY.log_probs(theta)
    want = [
        sum(log_p[t, j, int(x[t, j])] for j in range(MIRT_POLY.n_items) if np.isfinite(x[t, j]))
        for t in range(4)
    ]
    np.testing.assert_allclose(MIRT_POLY.log_likelihood(theta, x), want, rtol=1e-12)
    assert MIRT_POLY.max_scores.tolist() == [2, 2, 3, 1]
    sub = MIRT_POLY.subset(["q4", "q3"])
    np.testing.assert_allclose(
        sub.probabilities(theta)[..., :4], MIRT_POLY.probabilities(theta)[:, [3, 2], :4]
    )


def test_a_bifactor_set_answers_as_its_compensatory_form() -> None:
    theta = theta_for(BIFACTOR)  # (general, s1, s2)
    mirt = BIFACTOR.to_mirt()
    for method in ("probabilities", "expected_score", "variance", "information"):
        np.testing.assert_array_equal(
            getattr(BIFACTOR, method)(theta), getattr(mirt, method)(theta)
        )
    # ... which is the bifactor model at each item's own specific factor.
    specific = np.where(BIFACTOR.group >= 0, theta[:, 1:][:, np.maximum(BIFACTOR.group, 0)], 0.0)
    np.testing.assert_allclose(
        BIFACTOR.expected_score(theta),
        BIFACTOR.probability(theta[:, :1], specific),
        rtol=1e-12,
    )
    assert BIFACTOR.n_dimensions == 3
