"""Fixed-anchor calibration keeps the old scale."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError
from irt.linking.anchored import calibrate_with_anchors
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses

N_OLD, N_NEW = 60, 15


def _setup(seed: int = 0):  # type: ignore[no-untyped-def]
    """True parameters of 60 old and 15 new items; a new group θ ~ N(0.5, 1.2²) on the
    old scale answers all of them."""
    rng = np.random.default_rng(seed)
    ids = tuple([f"old{k}" for k in range(N_OLD)] + [f"new{k}" for k in range(N_NEW)])
    true = replace(random_params(N_OLD + N_NEW, rng, "3pl"), item_ids=ids)
    theta = 0.5 + 1.2 * rng.normal(size=3000)
    drawn = simulate_responses(true, theta, rng)
    responses = ResponseMatrix(subject_ids=drawn.subject_ids, item_ids=ids, values=drawn.values)
    return true, theta, responses


def test_new_items_and_the_new_group_land_on_the_old_scale() -> None:
    true, theta, responses = _setup()
    fixed = true.subset(np.arange(N_OLD))
    fit = calibrate_with_anchors(responses, fixed, "3pl")
    assert fit.converged and fit.anchored == fixed.item_ids
    assert fit.latent_mean == pytest.approx(theta.mean(), abs=0.03)
    assert fit.latent_sd == pytest.approx(theta.std(), abs=0.03)
    np.testing.assert_allclose(fit.params.b[:N_OLD], true.b[:N_OLD], atol=1e-6)
    np.testing.assert_allclose(fit.params.a[:N_OLD], true.a[:N_OLD], atol=1e-6)
    new_b, true_b = fit.params.b[N_OLD:], true.b[N_OLD:]
    assert abs(np.mean(new_b - true_b)) < 0.1 and np.corrcoef(new_b, true_b)[0, 1] > 0.97
    assert fit.params.se_b is not None
    assert np.isnan(fit.params.se_b[:N_OLD]).all()  # the anchors came without SEs
    assert (fit.params.se_b[N_OLD:] > 0).all()

    # A calibration of its own puts the new group at N(0, 1): every b moves by ~ −0.5/1.2.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        own = EMCalibrator("3pl", standard_errors=False).fit(responses).params_
    assert np.mean(own.b[N_OLD:] - true_b) < -0.3


def test_too_few_anchors_fail() -> None:
    true, _, responses = _setup(1)
    renamed = replace(true.subset(np.arange(3)), item_ids=("x", "y", "old0"))
    with pytest.raises(IRTError, match="at least 2 anchors, got 1"):
        calibrate_with_anchors(responses, renamed, "3pl")
