"""Polytomous item models (graded, gpcm, sequential, 2PL/3PL in mirt's form): category
probabilities, derivatives and information against finite differences and special
cases; the response matrix of ordered scores; EAP/MAP scores against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

from irt.errors import IRTError, ParamsError, ResponseDataError
from irt.models import ItemParams, log_probabilities
from irt.polytomous import ItemType, PolytomousParams, curves
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.polytomous_scoring import polytomous_scores
from irt.responses import ResponseMatrix

KINDS = [
    (ItemType.GRADED, 3),
    (ItemType.GRADED, 1),
    (ItemType.GPCM, 4),
    (ItemType.GPCM, 1),
    (ItemType.SEQUENTIAL, 3),
    (ItemType.TWO_PL, 1),
    (ItemType.THREE_PL, 1),
]


def random_items(
    kind: ItemType, m: int, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, d (n, m), c) of ``n`` plausible items of one type."""
    a = rng.uniform(0.5, 2.5, n)
    d = -np.sort(rng.normal(0.0, 1.5, (n, m)), axis=1)  # decreasing, as graded needs
    c = rng.uniform(0.05, 0.3, n) if kind.has_guessing else np.zeros(n)
    return a, d, c


def simulate(
    params: PolytomousParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> tuple[PolytomousResponses, np.ndarray]:
    """Scores of ``n`` subjects with θ ~ N(0, 1), a share ``missing`` of cells left out."""
    theta = rng.normal(size=n)
    prob = params.probabilities(theta)  # (n, J, K)
    scores = (prob.cumsum(axis=-1) < rng.random((n, params.n_items, 1))).sum(axis=-1)
    scores[rng.random(scores.shape) < missing] = MISSING
    responses = PolytomousResponses.from_array(
        scores, item_ids=params.item_ids, n_categories=params.n_categories.tolist()
    )
    return responses, theta


def mixed_pool(rng: np.random.Generator) -> PolytomousParams:
    types = ["2PL", "3PL", "graded", "graded", "gpcm", "gpcm", "sequential", "2PL"]
    a = rng.uniform(0.8, 2.0, len(types))
    d = [[0.3], [-0.2], [2.0, 0.5, -1.0], [1.0, -1.5], [0.5, 0.0, -1.5], [1.0], [1.0, 0.0, -0.5]]
    d.append([-0.8])
    c = [0, 0.2, 0, 0, 0, 0, 0, 0]
    return PolytomousParams.create(types, a, d, c)


# --- the models --------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "m"), KINDS)
def test_probabilities_sum_to_one_and_stay_finite(kind: ItemType, m: int) -> None:
    rng = np.random.default_rng(0)
    a, d, c = random_items(kind, m, 5, rng)
    theta = np.array([-60.0, -6.0, -1.0, 0.0, 0.7, 6.0, 60.0])
    log_p = curves(kind, theta, a, d, c).log_p
    assert log_p.shape == (7, 5, m + 1)
    assert np.all(np.isfinite(log_p)) and np.all(log_p <= 0)
    np.testing.assert_allclose(np.exp(log_p).sum(axis=-1), 1.0, atol=1e-13)


@pytest.mark.parametrize(("kind", "m"), KINDS)
def test_derivatives_and_information_match_finite_differences(kind: ItemType, m: int) -> None:
    """∂ log P_k/∂θ = a S_k, ∂/∂a = θ S_k, ∂/∂d_l and ∂/∂c by central differences, and
    I(θ) = Σ_k P_k (∂ log P_k/∂θ)² with the θ-derivative taken numerically."""
    rng = np.random.default_rng(1)
    a, d, c = random_items(kind, m, 4, rng)
    theta = np.linspace(-4.0, 4.0, 17)
    cv = curves(kind, theta, a, d, c, derivatives=True)
    assert cv.slope is not None and cv.thresholds is not None
    h = 1e-6

    def numeric(**bump: np.ndarray) -> np.ndarray:
        args = {"theta": theta, "a": a, "d": d, "c": c}
        up = [v + bump.get(k, 0.0) for k, v in args.items()]
        down = [v - bump.get(k, 0.0) for k, v in args.items()]
        diff = curves(kind, *up).log_p - curves(kind, *down).log_p
        return np.asarray(diff / (2 * h))

    dtheta = numeric(theta=np.full_like(theta, h))
    np.testing.assert_allclose(dtheta, a[None, :, None] * cv.slope, atol=1e-7)
    np.testing.assert_allclose(
        numeric(a=np.full_like(a, h)), theta[:, None, None] * cv.slope, atol=1e-7
    )
    for t in range(m):
        bump = np.zeros_like(d)
        bump[:, t] = h
        np.testing.assert_allclose(numeric(d=bump), cv.thresholds[..., t], atol=1e-7)
    if kind.has_guessing:
        assert cv.asymptote is not None
        np.testing.assert_allclose(numeric(c=np.full_like(c, h)), cv.asymptote, atol=1e-7)

    params = PolytomousParams.create([kind] * 4, a, d, c)
    info = params.information(theta)
    brute = (np.exp(cv.log_p) * dtheta**2).sum(axis=-1)
    np.testing.assert_allclose(info, brute, rtol=1e-6, atol=1e-12)
    assert np.all(info >= 0)


def test_one_threshold_models_are_the_2pl_of_irt_models() -> None:
    """With two categories graded = gpcm = sequential = 2PL = 3PL with c = 0, and the
    3PL is irt.models' 3PL with b = −d/a."""
    rng = np.random.default_rng(2)
    a, d, c = random_items(ItemType.THREE_PL, 1, 6, rng)
    theta = np.linspace(-5, 5, 21)
    ref = curves(ItemType.TWO_PL, theta, a, d).log_p
    for kind in (ItemType.GRADED, ItemType.GPCM, ItemType.SEQUENTIAL):
        np.testing.assert_allclose(curves(kind, theta, a, d).log_p, ref, atol=1e-13)
    np.testing.assert_allclose(
        curves(ItemType.THREE_PL, theta, a, d, np.zeros(6)).log_p, ref, atol=1e-13
    )
    log_p, log_q = log_probabilities(theta, ItemParams.create(a, -d[:, 0] / a, c))
    ours = curves(ItemType.THREE_PL, theta, a, d, c).log_p
    np.testing.assert_allclose(ours[..., 1], log_p, atol=1e-12)
    np.testing.assert_allclose(ours[..., 0], log_q, atol=1e-12)


def test_graded_categories_are_differences_of_cumulative_curves() -> None:
    a, d = np.array([1.3]), np.array([[2.0, 0.1, -1.7]])
    theta = np.linspace(-3, 3, 13)
    star = 1 / (1 + np.exp(-(a * theta[:, None] + d)))  # P(X ≥ k), k = 1..3
    star = np.hstack([np.ones((13, 1)), star, np.zeros((13, 1))])
    p = np.exp(curves(ItemType.GRADED, theta, a, d).log_p[:, 0])
    np.testing.assert_allclose(p, star[:, :-1] - star[:, 1:], atol=1e-14)
    # GPCM in mirt's form: P(X = k) ∝ exp(k a θ + d_k), d_0 = 0.
    eta = np.arange(4) * a * theta[:, None] + np.r_[0.0, d[0]]
    gpcm = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.exp(curves(ItemType.GPCM, theta, a, d).log_p[:, 0]), gpcm)
    # Sequential: Ψ_1 ⋯ Ψ_k (1 − Ψ_{k+1}).
    psi = 1 / (1 + np.exp(-(a * theta[:, None] + d)))
    seq = np.column_stack(
        [
            1 - psi[:, 0],
            psi[:, 0] * (1 - psi[:, 1]),
            psi[:, 0] * psi[:, 1] * (1 - psi[:, 2]),
            psi.prod(axis=1),
        ]
    )
    np.testing.assert_allclose(np.exp(curves(ItemType.SEQUENTIAL, theta, a, d).log_p[:, 0]), seq)


def test_params_container_of_a_mixed_pool() -> None:
    params = mixed_pool(np.random.default_rng(3))
    theta = np.linspace(-3, 3, 7)
    assert params.n_categories.tolist() == [2, 2, 4, 3, 4, 2, 4, 2]
    assert params.d.shape == (8, 3) and np.isnan(params.d[0, 1:]).all()
    p = params.probabilities(theta)
    assert p.shape == (7, 8, 4)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-13)
    assert np.all(p[:, 0, 2:] == 0) and np.all(np.isneginf(params.log_probs(theta)[:, 0, 2:]))
    np.testing.assert_allclose(params.expected_score(theta), (p * np.arange(4)).sum(axis=-1))
    assert np.all(np.diff(params.expected_score(theta), axis=0) > 0)  # increasing in θ
    np.testing.assert_allclose(params.test_information(theta), params.information(theta).sum(1))

    sub = params.subset(["i0005", "i0000"])
    assert sub.item_ids == ("i0005", "i0000") and sub.d.shape == (2, 1)
    np.testing.assert_allclose(sub.information(theta), params.information(theta)[:, [5, 0]])
    assert params.subset(params.n_categories == 4).item_ids == ("i0002", "i0004", "i0006")
    np.testing.assert_allclose(params.thresholds("i0003"), [1.0, -1.5])


def test_params_are_validated() -> None:
    with pytest.raises(ParamsError, match=r"item 'i0000': graded thresholds must decrease"):
        PolytomousParams.create("graded", [1.0], [[0.0, 0.5]])
    with pytest.raises(ParamsError, match="item 'i0000' is 2PL but has 2 thresholds"):
        PolytomousParams.create("2PL", [1.0], [[0.5, 0.0]])
    with pytest.raises(ParamsError, match="item 'i0000' is graded; only 3PL items have c"):
        PolytomousParams.create("graded", [1.0], [[0.5, 0.0]], c=[0.1])
    with pytest.raises(ParamsError, match=r"c must be in \[0, 1\)"):
        PolytomousParams.create("3PL", [1.0], [[0.5]], c=[1.0])
    with pytest.raises(ParamsError, match="unknown item type 'ideal' for item 'i0000'"):
        PolytomousParams.create("ideal", [1.0], [[0.5]])
    with pytest.raises(ParamsError, match="threshold d2 is empty but a later one is not"):
        PolytomousParams.create("gpcm", [1.0], np.array([[0.5, np.nan, 1.0]]))
    with pytest.raises(ParamsError, match=r"item 'i0000': no threshold \(d1 is empty\)"):
        PolytomousParams.create("gpcm", [1.0], np.array([[np.nan, np.nan]]))
    with pytest.raises(ParamsError, match="non-finite"):
        PolytomousParams.create("gpcm", [np.inf], [[0.5]])
    with pytest.raises(ParamsError, match="unknown item id 'zz'"):
        PolytomousParams.create("gpcm", [1.0], [[0.5]]).subset(["zz"])
    assert ItemType("GRM") is ItemType.GRADED and ItemType("3pl") is ItemType.THREE_PL


# --- the response matrix ---------------------------------------------------------------


def test_responses_from_arrays_and_binary_matrices() -> None:
    data = [[0, 2, 1], [1, np.nan, 3], [0, 1, -1]]
    resp = PolytomousResponses.from_array(data, item_ids=["x", "y", "z"])
    assert resp.n_categories == (2, 3, 4) and resp.max_scores.tolist() == [1, 2, 3]
    assert resp.values.dtype == np.int16 and resp.values[1, 1] == MISSING
    assert not resp.is_complete and resp.observed.sum() == 7
    assert resp.category_counts().tolist() == [[2, 1, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
    wider = PolytomousResponses.from_array(data, n_categories=[2, 5, 4])
    assert wider.n_categories == (2, 5, 4)
    sub = wider.subset(subjects=[0, 2], items=[2, 1])
    assert sub.n_categories == (4, 5) and sub.values.tolist() == [[1, 2], [-1, 1]]
    np.testing.assert_array_equal(resp.as_float()[1], [1.0, np.nan, 3.0])

    binary = ResponseMatrix.from_array([[1, 0], [0, np.nan]])
    poly = PolytomousResponses.from_binary(binary)
    assert poly.is_binary and poly.n_categories == (2, 2)
    np.testing.assert_array_equal(poly.values, binary.values)


def test_collapsed_renumbers_observed_scores_as_mirt() -> None:
    resp = PolytomousResponses.from_array([[1, 0], [4, 3], [2, 1], [4, np.nan]])
    out = resp.collapsed()
    assert out.values.tolist() == [[0, 0], [2, 2], [1, 1], [2, -1]]
    assert out.n_categories == (3, 3)


def test_bad_responses_are_refused_naming_subject_and_item() -> None:
    with pytest.raises(
        ResponseDataError,
        match=r"score of subject 's0001' on item 'b' is 3; item 'b' takes scores 0\.\.2",
    ):
        PolytomousResponses.from_array([[0, 1], [1, 3]], item_ids=["a", "b"], n_categories=[2, 3])
    with pytest.raises(ResponseDataError, match=r"subject 's0000' on item 'i0001' is 1\.5"):
        PolytomousResponses.from_array([[0, 1.5]])
    with pytest.raises(ResponseDataError, match="score of subject 's0000' on item 'i0000' is -2"):
        PolytomousResponses(("s0000",), ("i0000",), np.array([[-2]]))
    with pytest.raises(ResponseDataError, match="must be 2-D"):
        PolytomousResponses.from_array([0, 1, 2])
    with pytest.raises(ResponseDataError, match=r"shape \(2, 2\) does not match 2 subjects x 3"):
        PolytomousResponses(("a", "b"), ("x", "y", "z"), np.zeros((2, 2), dtype=int))
    with pytest.raises(ResponseDataError, match="n_categories has 1 entries for 2 items"):
        PolytomousResponses.from_array([[0, 1]], n_categories=[3])
    with pytest.raises(ResponseDataError, match="item 'i0001' has n_categories 1"):
        PolytomousResponses.from_array([[0, 0]], n_categories=[2, 1])
    with pytest.raises(ResponseDataError, match="duplicated item id 'x'"):
        PolytomousResponses.from_array([[0, 1]], item_ids=["x", "x"])
    with pytest.raises(ResponseDataError, match="no answers at all"):
        PolytomousResponses.from_array([[np.nan, np.nan]])
    with pytest.raises(ResponseDataError, match="stored as integers"):
        PolytomousResponses(("a",), ("x",), np.array([[1.0]]))


# --- scores ----------------------------------------------------------------------------


def _log_posterior(params: PolytomousParams, pattern: np.ndarray, theta: float) -> float:
    log_p = params.log_probs([theta])[0]
    answered = pattern >= 0
    return float(log_p[np.flatnonzero(answered), pattern[answered]].sum() - 0.5 * theta**2)


def test_eap_and_map_equal_brute_force_under_mixed_items() -> None:
    """EAP and posterior SD by adaptive integration over θ; MAP by bounded 1-D search
    and its SD from the numerical curvature of the log posterior at the mode."""
    rng = np.random.default_rng(4)
    params = mixed_pool(rng)
    resp, _ = simulate(params, 6, rng, missing=0.3)
    eap = polytomous_scores(resp, params, n_quad=201, bound=8.0)
    map_ = polytomous_scores(resp, params, "map")
    for i in range(resp.n_subjects):
        pattern = resp.values[i].astype(int)

        def density(t: float, power: int, pattern: np.ndarray = pattern) -> float:
            return float(t**power * np.exp(_log_posterior(params, pattern, t)))

        mass, first, second = (quad(density, -12, 12, args=(k,), epsabs=0)[0] for k in range(3))
        mean = first / mass
        assert eap.theta[i] == pytest.approx(mean, abs=1e-7)
        assert eap.sd[i] == pytest.approx(np.sqrt(second / mass - mean**2), abs=1e-7)

        best = minimize_scalar(
            lambda t, pattern=pattern: -_log_posterior(params, pattern, t),
            bounds=(-8, 8),
            method="bounded",
            options={"xatol": 1e-10},
        )
        assert map_.theta[i] == pytest.approx(best.x, abs=1e-6)
        h = 1e-4
        curv = (
            _log_posterior(params, pattern, best.x + h)
            - 2 * _log_posterior(params, pattern, best.x)
            + _log_posterior(params, pattern, best.x - h)
        ) / h**2
        assert map_.sd[i] == pytest.approx(1 / np.sqrt(-curv), rel=1e-4)
    assert map_.method == "map" and eap.n_answered.tolist() == resp.observed.sum(1).tolist()


def test_a_subject_without_answers_keeps_the_prior() -> None:
    params = mixed_pool(np.random.default_rng(5))
    values = np.full((2, params.n_items), MISSING)
    values[1, 2] = 3
    resp = PolytomousResponses(("none", "one"), params.item_ids, values, tuple(params.n_categories))
    for method in ("eap", "map"):
        scores = polytomous_scores(resp, params, method, prior_mean=0.5, prior_sd=0.8)
        assert scores.theta[0] == pytest.approx(0.5, abs=1e-6)
        assert scores.sd[0] == pytest.approx(0.8, rel=1e-6)
        assert scores.theta[1] > 0.5


def test_scores_refuse_mismatched_items() -> None:
    params = mixed_pool(np.random.default_rng(6))
    resp, _ = simulate(params, 5, np.random.default_rng(7))
    with pytest.raises(IRTError, match="same items in order"):
        polytomous_scores(resp.subset(items=[1, 0, 2, 3, 4, 5, 6, 7]), params)
    binary = params.subset([0, 1, 5, 7])
    bigger = PolytomousResponses.from_array(
        np.full((1, 4), 2), item_ids=binary.item_ids, n_categories=[3, 3, 3, 3]
    )
    with pytest.raises(IRTError, match=r"item 'i0000' has a score of 2 .* allow 0\.\.1"):
        polytomous_scores(bigger, binary)
    with pytest.raises(IRTError, match="method must be 'eap' or 'map'"):
        polytomous_scores(resp, params, "wle")
