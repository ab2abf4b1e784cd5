"""Scale linking recovers known scale changes."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError
from irt.linking.scale import mean_sigma, stocking_lord, transform
from irt.models import probability
from irt.simulate import random_params, simulate_responses

A_TRUE, B_TRUE = 1.3, -0.4


def test_transform_keeps_every_probability() -> None:
    params = random_params(50, np.random.default_rng(0), "3pl")
    theta_new = np.linspace(-3, 3, 13)
    moved = transform(params, A_TRUE, B_TRUE)
    np.testing.assert_allclose(
        probability(A_TRUE * theta_new + B_TRUE, moved), probability(theta_new, params)
    )
    with pytest.raises(IRTError, match="positive"):
        transform(params, 0.0, 0.0)


def test_exact_scale_changes_are_recovered_exactly() -> None:
    old = random_params(40, np.random.default_rng(1), "3pl")
    new = transform(old, 1 / A_TRUE, -B_TRUE / A_TRUE)  # the same items on a moved scale
    for link in (mean_sigma(old, new), stocking_lord(old, new)):
        assert pytest.approx(A_TRUE, abs=1e-5) == link.A
        assert pytest.approx(B_TRUE, abs=1e-5) == link.B
        assert link.n_anchors == 40


@pytest.mark.slow
def test_recalibrated_scale_is_recovered_within_0_02() -> None:
    """Two groups take the same 60 items: the old one θ ~ N(0, 1), the new one
    θ ~ N(B, A) on the old scale. Each calibration sets its own group to N(0, 1), so the
    new calibration's scale is the old one moved by (A, B); linking must find it."""
    rng = np.random.default_rng(2)
    true = random_params(60, rng, "2pl")
    theta_old, theta_new = rng.normal(size=20_000), B_TRUE + A_TRUE * rng.normal(size=20_000)
    old_group = simulate_responses(true, theta_old, rng)
    new_group = simulate_responses(true, theta_new, rng)
    # Each calibration scales its own sample to mean 0, SD 1, so the constants that
    # connect the two scales are those of the samples drawn (A, B plus sampling noise).
    A_drawn = theta_new.std() / theta_old.std()
    B_drawn = (theta_new.mean() - theta_old.mean()) / theta_old.std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        old = EMCalibrator("2pl", standard_errors=False).fit(old_group).params_
        new = EMCalibrator("2pl", standard_errors=False).fit(new_group).params_
    link = stocking_lord(old, new)
    assert abs(link.A - A_drawn) < 0.02 and abs(link.B - B_drawn) < 0.02
    assert abs(A_drawn - A_TRUE) < 0.03 and abs(B_drawn - B_TRUE) < 0.03  # the draw itself
    rough = mean_sigma(old, new)
    assert abs(rough.A - A_drawn) < 0.05 and abs(rough.B - B_drawn) < 0.05


def test_anchors_are_matched_by_id_in_any_order() -> None:
    old = random_params(30, np.random.default_rng(3), "3pl")
    new = transform(old, 2.0, 0.5).subset(np.arange(29, -1, -1)[:20])  # 20, reversed
    link = stocking_lord(old, new)
    assert link.n_anchors == 20
    assert pytest.approx(0.5, abs=1e-5) == link.A and pytest.approx(-0.25, abs=1e-5) == link.B
    with pytest.raises(IRTError, match="at least 2 anchor"):
        mean_sigma(old, replace(old.subset(np.array([0, 1])), item_ids=("x", "y")))
