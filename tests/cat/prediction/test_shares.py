"""Items on one scale: the share of their top score."""

from __future__ import annotations

import numpy as np
import pytest

from cat.prediction.shares import expected_share, observed_share, share_variance
from irt.models import probability
from irt.polytomous import PolytomousParams
from irt.simulate import random_params

GRADED = PolytomousParams.create("graded", [1.0, 1.5], [[1.0, 0.0, -1.0], [0.5, -0.5]])


def test_binary_items_keep_their_probability_and_bernoulli_variance() -> None:
    params = random_params(10, np.random.default_rng(0), "3pl")
    p = probability([0.4], params)
    np.testing.assert_array_equal(expected_share(params, [0.4]), p)
    np.testing.assert_allclose(share_variance(params, 0.4), p[0] * (1 - p[0]))
    np.testing.assert_array_equal(observed_share(params, np.array([1, 2]), [1, 0]), [1.0, 0.0])


def test_scored_items_are_shares_of_their_top_score() -> None:
    expected = GRADED.expected_score([0.4])[0]
    np.testing.assert_allclose(expected_share(GRADED, [0.4])[0], expected / [3, 2])
    prob = GRADED.probabilities([0.4])[0]
    k = np.arange(prob.shape[1])
    variance = prob @ k**2 - (prob @ k) ** 2
    np.testing.assert_allclose(share_variance(GRADED, 0.4), variance / np.array([9.0, 4.0]))
    np.testing.assert_allclose(observed_share(GRADED, np.array([1, 0]), [1, 3]), [0.5, 1.0])
    # A share never leaves [0, 1], whatever θ.
    shares = expected_share(GRADED, np.linspace(-8, 8, 33))
    assert shares.min() >= 0 and shares.max() <= 1
    assert shares[0] == pytest.approx([0, 0], abs=1e-3)
