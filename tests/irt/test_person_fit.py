"""lz person fit: about N(0, 1) for model-following patterns, very negative otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from irt.errors import IRTError
from irt.models import probability
from irt.person_fit import LZ_FLAG, lz
from irt.simulate import random_params

PARAMS = random_params(250, np.random.default_rng(0), "3pl")


def test_model_patterns_look_standard_normal_at_the_true_theta() -> None:
    rng = np.random.default_rng(1)
    values = []
    for theta in rng.normal(size=400):
        p = probability([theta], PARAMS)[0]
        values.append(lz((rng.random(PARAMS.n_items) < p).astype(float), theta, PARAMS))
    v = np.array(values)
    assert abs(v.mean()) < 0.15 and 0.85 < v.std() < 1.15
    assert np.mean(v < LZ_FLAG) < 0.09  # about 5% flagged


def test_a_memorised_pattern_is_flagged() -> None:
    # right on the hardest half, wrong on the easiest half: what a leak looks like
    y = (PARAMS.b > np.median(PARAMS.b)).astype(float)
    assert lz(y, 0.0, PARAMS) < -5


def test_bad_input() -> None:
    with pytest.raises(IRTError, match="responses for 250 items"):
        lz(np.zeros(3), 0.0, PARAMS)
    with pytest.raises(IRTError, match="0/1"):
        lz(np.full(250, 0.5), 0.0, PARAMS)
