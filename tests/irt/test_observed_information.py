"""``irt.estimation.observed_information``: the Hessian of an exact gradient and the
inversion that falls back to item blocks."""

from __future__ import annotations

import numpy as np

from irt.estimation.observed_information import (
    hessian_of_gradient,
    invert_information,
    relative_steps,
    root_variance,
)


def test_the_hessian_of_a_quadratic_is_its_matrix_and_progress_counts() -> None:
    rng = np.random.default_rng(4)
    root = rng.normal(size=(5, 5))
    matrix = root @ root.T
    x = rng.normal(size=5) * 100

    def gradient(v: np.ndarray) -> np.ndarray:
        return np.asarray(matrix @ v + np.sin(v[0]))  # every component gains cos(v0) along v0

    seen: list[tuple[int, int]] = []
    hess = hessian_of_gradient(gradient, x, relative_steps(x), lambda i, n: seen.append((i, n)))
    expected = matrix.copy()
    expected[:, 0] += np.cos(x[0])
    np.testing.assert_allclose(hess, 0.5 * (expected + expected.T), rtol=1e-6, atol=1e-6)
    assert seen == [(i, 5) for i in range(1, 6)]
    assert relative_steps(np.array([0.0, -300.0]))[1] == 300 * relative_steps(np.zeros(1))[0]


def test_a_singular_information_is_inverted_item_by_item() -> None:
    good = np.array([[2.0, 0.5], [0.5, 1.0]])
    info = np.zeros((5, 5))
    info[:2, :2] = good
    info[2:, 2:] = 1.0  # a second item (3 parameters) with no information in 2 of them
    cov = invert_information(info, [2, 3])
    np.testing.assert_allclose(cov[:2, :2], np.linalg.inv(good))
    assert np.isnan(cov[2:, 2:]).all() and np.isnan(cov[:2, 2:]).all()
    full = np.eye(5) * 4.0
    np.testing.assert_allclose(invert_information(full, [2, 3]), np.eye(5) / 4.0)
    se = root_variance(np.array([4.0, 0.0, -1.0]))
    assert se[0] == 2.0 and np.isnan(se[1:]).all()
