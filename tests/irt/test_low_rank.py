import numpy as np
import pytest

from irt.errors import IRTError
from irt.exploratory.low_rank import LowRankCalibrator, logistic_rows
from irt.responses import ResponseMatrix


def _simulate(
    rng: np.random.Generator, n: int, j: int, k: int
) -> tuple[ResponseMatrix, np.ndarray]:
    u = rng.normal(size=(n, k))
    v = rng.normal(scale=1.2, size=(j, k))
    b = rng.normal(size=j)
    prob = 1 / (1 + np.exp(-(u @ v.T + b)))
    values = (rng.random((n, j)) < prob).astype(np.int8)
    values[rng.random((n, j)) < 0.05] = -1  # some answers missing
    ids = tuple(f"s{i}" for i in range(n)), tuple(f"i{i}" for i in range(j))
    return ResponseMatrix(ids[0], ids[1], values), prob


def test_recovers_the_probabilities_of_a_low_rank_matrix() -> None:
    rng = np.random.default_rng(0)
    data, prob = _simulate(rng, 300, 200, 3)
    fit = LowRankCalibrator(dims=3, penalty=1.0).fit(data)
    assert fit.converged_
    fitted = 1 / (1 + np.exp(-(fit.person_ @ fit.loadings_.T + fit.intercepts_)))
    assert np.corrcoef(fitted.ravel(), prob.ravel())[0, 1] > 0.9
    one = LowRankCalibrator(dims=1, penalty=1.0).fit(data)
    assert fit.loglik_ > one.loglik_ + 1000  # three factors explain what one cannot


def test_each_regression_reaches_its_penalised_optimum() -> None:
    rng = np.random.default_rng(1)
    design = rng.normal(size=(50, 3))
    y = (rng.random((4, 50)) < 0.5).astype(float)
    mask = np.ones_like(y)
    penalty = np.array([1.0, 1.0, 0.01])
    theta = logistic_rows(np.zeros((4, 3)), design, np.zeros(50), y, mask, penalty, steps=30)
    p = 1 / (1 + np.exp(-(theta @ design.T)))
    grad = (p - y) @ design + penalty * theta
    assert np.max(np.abs(grad)) < 1e-8


def test_bad_settings_are_refused() -> None:
    with pytest.raises(IRTError, match="dimension"):
        LowRankCalibrator(dims=0)
    with pytest.raises(IRTError, match="penalty"):
        LowRankCalibrator(penalty=0.0)


def test_softplus_is_logaddexp_with_zero() -> None:
    from irt.exploratory.low_rank import softplus

    z = np.concatenate([np.linspace(-800, 800, 4001), [0.0, -1e-300, 1e-300, 37.0, -37.0]])
    np.testing.assert_allclose(softplus(z), np.logaddexp(0.0, z), rtol=1e-15, atol=0)
    assert np.isfinite(softplus(z)).all()
