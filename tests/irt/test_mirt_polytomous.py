"""Multidimensional pools of 2PL, graded, gpcm and nominal items: the category curves
and information against their formulas, the M-step's gradient against finite
differences, the bifactor dimension reduction against the full grid, parameter
recovery on simulated data, and R mirt's ``conftwo1`` and ``bfactor1`` fits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.special import expit, softmax

from irt.errors import IRTError, ParamsError
from irt.mirt_estep import log_weights, product_grid
from irt.mirt_polytomous import (
    CategoryLayout,
    MirtPolytomousParams,
    MultiItemType,
)
from irt.mirt_polytomous_em import BifactorPolytomousCalibrator, MirtPolytomousCalibrator
from irt.mirt_polytomous_estep import (
    bifactor_polytomous_log_likelihood,
    mirt_polytomous_log_likelihood,
)
from irt.mirt_polytomous_mstep import GroupCoordinates, group_objective, group_score
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_responses import MISSING, PolytomousResponses

POLYTOMOUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "human" / "polytomous"
needs_polytomous = pytest.mark.skipif(
    not POLYTOMOUS.is_dir(), reason="../shared/data/human/polytomous is absent"
)

BFACTOR1_TYPES = ["2PL"] * 4 + ["nominal", "gpcm"] + ["graded"] * 4 + ["2PL"] * 4


def _mean_relative(x: np.ndarray, y: np.ndarray) -> float:
    """testthat 3e / waldo: mean|x − y| / mean|y| over the elements not exactly equal."""
    keep = x != y
    return float(np.mean(np.abs(x[keep] - y[keep])) / np.mean(np.abs(y[keep])))


def _refs() -> dict[str, Any]:
    return {r["id"]: r for r in json.loads((POLYTOMOUS / "refs.json").read_text())}


def _coefficients(ref_id: str) -> np.ndarray:
    (figure,) = [f for f in _refs()[ref_id]["figures"] if f["what"].startswith("coefficients")]
    return np.array(figure["value"], dtype=float)


def _read(name: str) -> PolytomousResponses:
    path = POLYTOMOUS / name
    items = path.read_text().splitlines()[0].split(",")
    return PolytomousResponses.from_array(
        np.loadtxt(path, delimiter=",", skiprows=1), item_ids=items
    )


def _pool(rng: np.random.Generator, pattern: np.ndarray, corr: float = 0.0) -> MirtPolytomousParams:
    """Items cycling through 2PL, graded (4 categories), gpcm (3), nominal (4)."""
    n, k = pattern.shape
    kinds = ["2PL", "graded", "gpcm", "nominal"]
    types: list[str] = []
    d: list[list[float]] = []
    ak: list[list[float]] = []
    for j in range(n):
        kind = kinds[j % 4]
        types.append(kind)
        if kind == "2PL":
            d.append([rng.normal(0.0, 1.0)])
            ak.append([])
        elif kind == "graded":
            d.append(sorted(rng.normal(0.0, 1.2, 3), reverse=True))
            ak.append([])
        elif kind == "gpcm":
            d.append(list(rng.normal(0.5, 0.8, 2)))
            ak.append([1.0, 2.0])
        else:
            d.append(list(rng.normal(0.5, 0.8, 3)))
            ak.append([rng.uniform(0.4, 1.2), rng.uniform(1.4, 2.3), 3.0])
    slopes = np.where(pattern, rng.uniform(0.8, 1.8, (n, k)), 0.0)
    r = np.eye(k)
    if k == 2:
        r[0, 1] = r[1, 0] = corr
    return MirtPolytomousParams.create(types, slopes, d, ak, pattern=pattern, correlation=r)


def _simulate(
    params: MirtPolytomousParams, n: int, rng: np.random.Generator, missing: float = 0.0
) -> PolytomousResponses:
    theta = rng.multivariate_normal(np.zeros(params.n_factors), params.correlation, n)
    cum = np.cumsum(params.probabilities(theta), axis=2)
    values = (rng.random((n, params.n_items, 1)) > cum).sum(axis=2)
    values = np.minimum(values, params.n_categories - 1)
    values[rng.random(values.shape) < missing] = MISSING
    return PolytomousResponses(
        tuple(f"s{i}" for i in range(n)),
        params.item_ids,
        values.astype(np.int16),
        tuple(int(k) for k in params.n_categories),
    )


# --- curves and information -----------------------------------------------------------


def test_probabilities_follow_mirt_formulas_and_sum_to_one() -> None:
    rng = np.random.default_rng(1)
    pattern = np.ones((8, 2), dtype=bool)
    params = _pool(rng, pattern)
    theta = rng.normal(0.0, 2.0, (50, 2))
    prob = params.probabilities(theta)
    n_cat = params.n_categories
    for j in range(params.n_items):
        k = int(n_cat[j])
        eta = theta @ params.slopes[j]
        d = params.d[j, : k - 1]
        kind = params.item_types[j]
        if kind in (MultiItemType.TWO_PL, MultiItemType.GRADED):
            up = np.column_stack([np.ones(50), expit(eta[:, None] + d), np.zeros(50)])
            want = up[:, :-1] - up[:, 1:]
        else:
            ak = np.append(0.0, params.ak[j, : k - 1])
            want = softmax(eta[:, None] * ak + np.append(0.0, d), axis=1)
        np.testing.assert_allclose(prob[:, j, :k], want, rtol=1e-10, atol=1e-14)
        assert np.all(prob[:, j, k:] == 0)
    np.testing.assert_allclose(prob.sum(axis=2), 1.0, rtol=1e-12)
    np.testing.assert_allclose(
        params.expected_score(theta), (prob * np.arange(prob.shape[2])).sum(axis=2)
    )


def test_information_is_the_expected_outer_product_of_scores() -> None:
    """I_j(θ) = Σ_k P_k ∇_θ log P_k ∇_θ log P_kᵀ, the gradients by central differences."""
    rng = np.random.default_rng(2)
    params = _pool(rng, np.ones((8, 2), dtype=bool))
    theta = rng.normal(0.0, 1.5, (6, 2))
    h = 1e-5
    real = np.arange(params.probabilities(theta).shape[2]) < params.n_categories[:, None]

    def log_p(at: np.ndarray) -> np.ndarray:
        return np.where(real, params.log_probs(at), 0.0)  # −inf beyond an item's categories

    grads = np.stack(
        [(log_p(theta + h * e) - log_p(theta - h * e)) / (2 * h) for e in np.eye(2)], axis=-1
    )  # (T, J, K, 2)
    prob = params.probabilities(theta)
    want = np.einsum("tjk,tjka,tjkb->tjab", prob, grads, grads)
    got = params.information(theta)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(params.test_information(theta), want.sum(axis=1), rtol=1e-6)


def test_group_gradient_matches_finite_differences() -> None:
    """The M-step's gradient in ψ (slopes, graded log gaps, nominal ak) against central
    differences of its objective, with one slope fixed by the pattern."""
    rng = np.random.default_rng(3)
    pattern = np.ones((8, 2), dtype=bool)
    pattern[1, 1] = False
    params = _pool(rng, pattern)
    points = product_grid(2, 7, 4.0)
    layout = params.layout()
    for g in layout.groups:
        coords = GroupCoordinates.of(g, pattern[g.items])
        psi = coords.to_psi(*params.group_parameters(g))
        r = rng.uniform(0.0, 3.0, (points.shape[0], g.items.size, g.n_cat))
        grad, info = group_score(coords, psi, r, points)
        numeric = np.zeros_like(psi)
        for col in range(coords.width):
            step = np.zeros_like(psi)
            step[:, col] = 1e-6
            up = group_objective(coords, psi + step, r, points)
            down = group_objective(coords, psi - step, r, points)
            numeric[:, col] = (up - down) / 2e-6
        numeric = np.where(coords.free, numeric, 0.0)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)
        assert np.all(np.linalg.eigvalsh(info) > -1e-9)
        np.testing.assert_allclose(coords.natural(psi)[1], params.group_parameters(g)[1])


# --- likelihoods ----------------------------------------------------------------------


def test_grid_log_likelihood_equals_brute_force() -> None:
    """Subject by subject and node by node on a small correlated grid, with missing
    answers."""
    rng = np.random.default_rng(4)
    params = _pool(rng, np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [1, 1]], bool), 0.5)
    resp = _simulate(params, 30, rng, missing=0.2)
    points = product_grid(2, 9, 5.0)
    weight = np.exp(log_weights(points, params.correlation))
    prob = params.probabilities(points)  # (Q, J, K)
    brute = 0.0
    for row in resp.values:
        like = weight.copy()
        for j, y in enumerate(row):
            if y != MISSING:
                like = like * prob[:, j, y]
        brute += np.log(like.sum())
    got = mirt_polytomous_log_likelihood(resp, params, n_quad=9, bound=5.0)
    assert got == pytest.approx(brute, rel=1e-12)


def test_bifactor_reduction_equals_the_full_grid() -> None:
    """General + two specific blocks and a general-only item: the dimension-reduced
    log-likelihood is the full three-dimensional product grid's."""
    rng = np.random.default_rng(5)
    pattern = np.zeros((9, 3), dtype=bool)
    pattern[:, 0] = True
    pattern[:4, 1] = True
    pattern[4:8, 2] = True
    params = _pool(rng, pattern)
    resp = _simulate(params, 200, rng, missing=0.1)
    reduced = bifactor_polytomous_log_likelihood(resp, params, n_quad=11)
    full = mirt_polytomous_log_likelihood(resp, params, n_quad=11)
    assert reduced == pytest.approx(full, rel=1e-11)


# --- recovery -------------------------------------------------------------------------


def test_confirmatory_recovery_with_correlated_factors() -> None:
    rng = np.random.default_rng(6)
    pattern = np.zeros((12, 2), dtype=bool)
    pattern[:7, 0] = True
    pattern[5:, 1] = True
    true = _pool(rng, pattern, corr=0.4)
    resp = _simulate(true, 3000, rng)
    fit = MirtPolytomousCalibrator(pattern, list(true.item_types), correlated=True, tol=1e-5)
    fit.fit(resp)
    got = fit.params_
    assert fit.converged_
    assert np.mean(np.abs(got.slopes - true.slopes)[pattern]) < 0.1
    assert np.nanmean(np.abs(got.d - true.d)) < 0.12
    nominal = [j for j, t in enumerate(true.item_types) if t is MultiItemType.NOMINAL]
    assert np.mean(np.abs(got.ak[nominal, :2] - true.ak[nominal, :2])) < 0.25
    assert got.correlation[0, 1] == pytest.approx(0.4, abs=0.06)
    assert fit.loglik_ >= mirt_polytomous_log_likelihood(resp, true) - 1e-6
    assert fit.loglik_ == pytest.approx(mirt_polytomous_log_likelihood(resp, got), rel=1e-12)


def test_bifactor_recovery() -> None:
    rng = np.random.default_rng(7)
    specific = [0] * 5 + [1] * 5 + [None]
    pattern = np.zeros((11, 3), dtype=bool)
    pattern[:, 0] = True
    pattern[:5, 1] = True
    pattern[5:10, 2] = True
    true = _pool(rng, pattern)
    resp = _simulate(true, 3000, rng)
    fit = BifactorPolytomousCalibrator(specific, list(true.item_types), tol=1e-4).fit(resp)
    got = fit.params_
    assert np.mean(np.abs(got.slopes - true.slopes)[pattern]) < 0.12
    assert np.nanmean(np.abs(got.d - true.d)) < 0.15
    assert fit.loglik_ >= bifactor_polytomous_log_likelihood(resp, true) - 1e-6


def test_one_factor_fit_equals_the_unidimensional_calibrator() -> None:
    """On one factor the multidimensional EM fits the model of ``PolytomousCalibrator``
    (2PL, graded and gpcm items, 61 points on [−6, 6]): same maximum, same estimates."""
    rng = np.random.default_rng(8)
    true = _pool(rng, np.ones((8, 1), dtype=bool))
    keep = [j for j, t in enumerate(true.item_types) if t is not MultiItemType.NOMINAL]
    resp = _simulate(true, 1500, rng, missing=0.05).subset(items=keep)
    types = [true.item_types[j].value for j in keep]
    ours = MirtPolytomousCalibrator(np.ones((len(keep), 1), bool), types, tol=1e-7).fit(resp)
    theirs = PolytomousCalibrator(types, tol=1e-7, standard_errors=None).fit(resp)
    assert ours.loglik_ == pytest.approx(theirs.loglik_, abs=1e-6)
    np.testing.assert_allclose(ours.params_.slopes[:, 0], theirs.params_.a, atol=1e-4)
    np.testing.assert_allclose(ours.params_.d, theirs.params_.d, atol=1e-4)


# --- R mirt ---------------------------------------------------------------------------


@needs_polytomous
def test_conftwo1_mixed_2pl_graded_matches_mirt() -> None:
    """mirt(dataset, 'F1 = 1-4, F2 = 4-8, COV = F1*F2'): 2PL and graded items on two
    correlated factors. Coefficients within mirt's 1e-2 (mean relative), df 1512, and
    our maximum no lower than our log-likelihood at mirt's values."""
    resp = _read("testdata_conftwo1.csv")
    pattern = np.zeros((8, 2), dtype=bool)
    pattern[:4, 0] = True
    pattern[3:, 1] = True
    fit = MirtPolytomousCalibrator(pattern, correlated=True).fit(resp)
    reference = _coefficients("conftwo1_mixed_2pl_graded_2f")
    p = fit.params_
    ours: list[float] = []
    slopes: list[np.ndarray] = []
    thresholds: list[list[float]] = []
    at = 0
    for j, k in enumerate(resp.n_categories):
        extra = [0.0, 1.0] if k == 2 else []  # mirt's fixed g and u of a 2PL item
        ours += [*p.slopes[j], *p.d[j, : k - 1], *extra]
        slopes.append(reference[at : at + 2])
        thresholds.append(list(reference[at + 2 : at + 1 + k]))
        at += 1 + k + len(extra)
    ours += [0.0, 0.0, 1.0, p.correlation[1, 0], 1.0]
    distance = _mean_relative(np.array(ours), reference)
    rho = reference[-2]
    theirs = MirtPolytomousParams.create(
        p.item_types,
        np.array(slopes),
        thresholds,
        pattern=pattern,
        correlation=[[1.0, rho], [rho, 1.0]],
        item_ids=p.item_ids,
    )
    at_mirt = mirt_polytomous_log_likelihood(resp, theirs)
    print(
        f"\nconftwo1: distance {distance:.2e}, logLik {fit.loglik_:.4f} (at mirt's "
        f"{at_mirt:.4f}), {fit.n_iter_} cycles, {fit.seconds_:.1f} s"
    )
    assert fit.converged_
    assert fit.df_ == 1512
    assert distance < 1e-2
    assert fit.loglik_ >= at_mirt - 1e-6


def _bfactor1_ours(params: MirtPolytomousParams) -> np.ndarray:
    """mirt's coef() of a bfactor1 fit without the values exactly 0 or 1: per item the
    nonzero slopes, ak1..akm (nominal) or akm (gpcm), then d1..dm."""
    out: list[float] = []
    for j, k in enumerate(params.n_categories):
        out += [float(x) for x in params.slopes[j] if x != 0]
        kind = params.item_types[j]
        if kind is MultiItemType.NOMINAL:
            out += list(params.ak[j, : k - 1])
        elif kind is MultiItemType.GPCM:
            out.append(float(params.ak[j, k - 2]))
        out += list(params.d[j, : k - 1])
    return np.array(out)


def _bfactor1_mirt(
    reference: np.ndarray, resp: PolytomousResponses, specific: list[int | None]
) -> MirtPolytomousParams:
    slopes = np.zeros((14, 3))
    d, ak, at = [], [], 0
    for j, k in enumerate(resp.n_categories):
        s = specific[j]
        slopes[j, 0] = reference[at]
        if s is not None:
            slopes[j, 1 + s] = reference[at + 1]
        at += 1 if s is None else 2
        kind = BFACTOR1_TYPES[j]
        ak.append(list(reference[at : at + k - 1]) if kind == "nominal" else [])
        at += {"nominal": k - 1, "gpcm": 1}.get(kind, 0)
        d.append(list(reference[at : at + k - 1]))
        at += k - 1
    pattern = np.zeros((14, 3), dtype=bool)
    pattern[:, 0] = True
    for j, s in enumerate(specific):
        if s is not None:
            pattern[j, 1 + s] = True
    return MirtPolytomousParams.create(
        BFACTOR1_TYPES, slopes, d, ak, pattern=pattern, item_ids=resp.item_ids
    )


@needs_polytomous
@pytest.mark.parametrize(
    ("ref_id", "first", "df"),
    [
        ("bfactor1_mixed_bifactor", 0, 442315),
        ("bfactor1_mixed_bifactor_item1_general_only", None, 442316),
    ],
)
def test_bfactor1_mixed_bifactor_matches_mirt(ref_id: str, first: int | None, df: int) -> None:
    """bfactor(dataset, specific, itemtype = items, TOL = 3e-3) with 2PL, nominal, gpcm
    and graded items. mirt stopped at TOL 3e-3, well short of the optimum on this flat
    likelihood (with item 1 on both factors the likelihood keeps rising along a ridge
    where specific factor 2 collapses onto one item): plain EM stopped at the same
    tolerance lands within mirt's 1e-2 (mean relative)."""
    resp = _read("testdata_bfactor1.csv")
    specific: list[int | None] = [first] + [0] * 6 + [1] * 7
    fit = BifactorPolytomousCalibrator(specific, BFACTOR1_TYPES, tol=3e-3, accelerate=False)
    fit.fit(resp)
    reference = _coefficients(ref_id)
    distance = _mean_relative(_bfactor1_ours(fit.params_), reference)
    at_mirt = bifactor_polytomous_log_likelihood(resp, _bfactor1_mirt(reference, resp, specific))
    print(
        f"\n{ref_id}: distance {distance:.2e}, logLik {fit.loglik_:.4f} (at mirt's "
        f"{at_mirt:.4f}), {fit.n_iter_} cycles, {fit.seconds_:.1f} s"
    )
    assert fit.df_ == df
    assert distance < 1e-2


@needs_polytomous
def test_bfactor1_item1_general_only_optimum_beats_mirt() -> None:
    """Run to convergence, the general-only variant reaches a log-likelihood at least as
    high as ours at mirt's (early-stopped) values, a few hundredths relative away."""
    resp = _read("testdata_bfactor1.csv")
    specific: list[int | None] = [None] + [0] * 6 + [1] * 7
    fit = BifactorPolytomousCalibrator(specific, BFACTOR1_TYPES, tol=1e-5).fit(resp)
    reference = _coefficients("bfactor1_mixed_bifactor_item1_general_only")
    distance = _mean_relative(_bfactor1_ours(fit.params_), reference)
    at_mirt = bifactor_polytomous_log_likelihood(resp, _bfactor1_mirt(reference, resp, specific))
    print(
        f"\nexact optimum: distance {distance:.2e}, logLik {fit.loglik_:.4f} (at mirt's "
        f"{at_mirt:.4f}), {fit.n_iter_} cycles, {fit.seconds_:.1f} s"
    )
    assert fit.converged_
    assert fit.loglik_ >= at_mirt - 1e-6
    assert distance < 0.05


# --- bad input ------------------------------------------------------------------------


def test_bad_input_is_refused() -> None:
    with pytest.raises(ParamsError, match="gpcm"):
        MirtPolytomousParams.create(["gpcm"], [[1.0]], [[0.1, 0.2]], [[1.0, 3.0]])
    with pytest.raises(ParamsError, match="ak2 = 2"):
        MirtPolytomousParams.create(["nominal"], [[1.0]], [[0.1, 0.2]], [[1.0, 2.5]])
    with pytest.raises(ParamsError, match="decrease"):
        MirtPolytomousParams.create(["graded"], [[1.0]], [[0.1, 0.2]])
    with pytest.raises(ParamsError, match="pattern"):
        MirtPolytomousParams.create(["2PL"], [[1.0, 0.5]], [[0.1]], pattern=[[True, False]])
    with pytest.raises(ParamsError, match="unknown item type"):
        MirtPolytomousParams.create(["rasch"], [[1.0]], [[0.1]])
    resp = PolytomousResponses.from_array(np.array([[0, 1, 2], [1, 0, 1], [1, 1, 0]]))
    with pytest.raises(IRTError, match="nominal"):
        MirtPolytomousCalibrator(np.ones((3, 1), bool), ["nominal", "2PL", "graded"]).fit(resp)
    with pytest.raises(IRTError, match="rows"):
        MirtPolytomousCalibrator(np.ones((2, 1), bool)).fit(resp)
    with pytest.raises(IRTError, match="fewer than 2"):
        BifactorPolytomousCalibrator([0, 1, 1])
    assert CategoryLayout.of([MultiItemType.GPCM], [3]).n_columns == 3
