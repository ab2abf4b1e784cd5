"""The polytomous E-step's two products (``irt.polytomous_products``): worked through a
block of patterns at a time, on the host or on torch's CPU device, they equal the
products with the whole indicator matrix."""

from __future__ import annotations

import numpy as np
import pytest

from irt.estimation.arrays import to_numpy
from irt.estimation.devices import HOST, Backend
from irt.polytomous import ItemType
from irt.polytomous_layout import Layout, Patterns
from irt.polytomous_products import PatternProducts
from irt.polytomous_responses import MISSING

CATEGORIES = [2, 3, 5, 4, 2, 6, 3]


@pytest.fixture(scope="module")
def patterns() -> Patterns:
    """Items of two to six categories, a fifth of the answers missing, repeated rows."""
    rng = np.random.default_rng(7)
    scores = np.stack([rng.integers(0, k, size=240) for k in CATEGORIES], axis=1)
    scores[rng.random(scores.shape) < 0.2] = MISSING
    scores[200:] = scores[:40]
    types = [ItemType.default_for(k) for k in CATEGORIES]
    return Patterns.of(scores.astype(np.int16), Layout.of(types, CATEGORIES))


def _backends() -> list[Backend]:
    out = [HOST]
    try:
        import array_api_compat  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return out
    return [*out, Backend("cpu")]


@pytest.mark.parametrize("backend", _backends(), ids=lambda b: b.name)
def test_blocks_of_patterns_give_the_whole_products(patterns: Patterns, backend: Backend) -> None:
    rng = np.random.default_rng(8)
    table = rng.normal(size=(patterns.n_columns, 9))
    weights = rng.random((patterns.rows.shape[0], 9))
    whole = patterns.onehot
    blocked = PatternProducts.of(patterns, backend, whole_bytes=0)
    assert blocked.whole is None
    object.__setattr__(blocked, "block_rows", 13)  # several blocks, the last one short
    np.testing.assert_allclose(
        blocked.log_likelihood(backend.asarray(table)), whole @ table, rtol=1e-13, atol=1e-12
    )
    np.testing.assert_allclose(
        to_numpy(blocked.counts(weights)), whole.T @ weights, rtol=1e-13, atol=1e-12
    )


def test_a_small_pool_keeps_the_indicators_whole_and_a_large_one_never_builds_them(
    patterns: Patterns,
) -> None:
    fresh = Patterns.of(
        patterns.rows, Layout.of([ItemType.default_for(k) for k in CATEGORIES], CATEGORIES)
    )
    blocked = PatternProducts.of(fresh, HOST, whole_bytes=0)
    blocked.counts(np.ones((fresh.rows.shape[0], 3)))
    assert "onehot" not in vars(fresh)  # the (P, C) floats were never made
    assert PatternProducts.of(fresh).whole is fresh.onehot


def test_patterns_are_held_as_their_scores(patterns: Patterns) -> None:
    assert patterns.rows.dtype == np.int16
    assert patterns.counts.sum() == 240
    assert patterns.onehot.sum(axis=1).tolist() == (patterns.rows != MISSING).sum(axis=1).tolist()
