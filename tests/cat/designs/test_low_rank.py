import numpy as np

from cat.designs.low_rank import LowRankModel, LowRankTest, low_rank_accuracy
from cat.designs.replay import replay_reference_test


def _model(rng: np.random.Generator, j: int = 120, k: int = 3) -> LowRankModel:
    person = rng.normal(size=(200, k))
    return LowRankModel.from_fit(person, rng.normal(scale=1.2, size=(j, k)), rng.normal(size=j))


def test_map_estimate_is_a_stationary_point_of_the_posterior() -> None:
    rng = np.random.default_rng(0)
    model = _model(rng)
    can = np.ones((3, 120), dtype=bool)
    answers = (rng.random((3, 120)) < 0.5).astype(float)
    test = LowRankTest(model, can, 60)
    replay_reference_test(test, answers, [60])
    for e in range(3):
        items = test.items[e]
        v, b = model.loadings[items], model.intercepts[items]
        p = 1 / (1 + np.exp(-(v @ test.u[e] + b)))
        grad = v.T @ (p - test.right[e]) + model.prior_precision @ (test.u[e] - model.prior_mean)
        assert np.max(np.abs(grad)) < 1e-5


def test_selection_gain_is_the_drop_in_the_predicted_scores_variance() -> None:
    rng = np.random.default_rng(1)
    model = _model(rng, j=30, k=2)
    test = LowRankTest(model, np.ones((1, 30), dtype=bool), 10)
    answers = (rng.random((1, 30)) < 0.5).astype(float)
    replay_reference_test(test, answers, [5])
    rows = np.array([0])
    _, p = test._probabilities(rows)
    var = (p * (1 - p))[0]
    avail = test.available[0]
    v = model.loadings
    cov = test.cov[0]
    g = (var * avail) @ v

    def total_variance(cov_after: np.ndarray, left: np.ndarray) -> float:
        return float(g @ cov_after @ g + (var * left).sum())

    before = total_variance(cov, avail)
    drops = np.full(30, -np.inf)
    for j in np.flatnonzero(avail):
        after_cov = np.linalg.inv(np.linalg.inv(cov) + var[j] * np.outer(v[j], v[j]))
        left = avail.copy()
        left[j] = False
        drops[j] = before - total_variance(after_cov, left)
    assert test.select(rows)[0, 0] == int(np.argmax(drops))


def test_scoring_any_item_set_matches_the_adaptive_state() -> None:
    rng = np.random.default_rng(2)
    model = _model(rng)
    can = rng.random((4, 120)) < 0.95
    answers = (rng.random(can.shape) < 0.6).astype(float)
    test = LowRankTest(model, can, 25)
    out, given = replay_reference_test(test, answers, [25])
    np.testing.assert_allclose(low_rank_accuracy(model, can, given, answers), out[25], atol=1e-6)


def test_a_model_like_the_references_is_predicted_closely() -> None:
    rng = np.random.default_rng(3)
    k, j = 3, 400
    person = rng.normal(size=(300, k))
    v = rng.normal(scale=1.2, size=(j, k))
    b = rng.normal(size=j)
    model = LowRankModel.from_fit(person, v, b)
    u_new = rng.normal(size=(20, k))
    prob = 1 / (1 + np.exp(-(u_new @ v.T + b)))
    answers = (rng.random(prob.shape) < prob).astype(float)
    out, _ = replay_reference_test(
        LowRankTest(model, np.ones((20, j), dtype=bool), 60), answers, [60]
    )
    assert np.mean(np.abs(out[60] - answers.mean(axis=1))) < 0.03


def test_each_items_variance_through_the_posterior_is_its_quadratic_form() -> None:
    rng = np.random.default_rng(7)
    model = _model(rng, j=40, k=3)
    test = LowRankTest(model, np.ones((4, 40), dtype=bool), 12)
    replay_reference_test(test, (rng.random((4, 40)) < 0.5).astype(float), [12])
    rows = np.arange(4)
    v = model.loadings
    expected = np.einsum("jk,ekm,jm->ej", v, test.cov, v)
    np.testing.assert_allclose(test._quadratic(rows), expected, rtol=1e-12)
