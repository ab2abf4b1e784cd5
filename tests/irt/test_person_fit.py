"""lz person fit: about N(0, 1) for model-following patterns, very negative otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from irt.errors import IRTError
from irt.fit.persons import LZ_FLAG, lz, lz_scored
from irt.models import probability
from irt.polytomous import PolytomousParams
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


def _scored_pool() -> PolytomousParams:
    rng = np.random.default_rng(4)
    a = rng.lognormal(0.0, 0.3, 120)
    d = -(a[:, None] * np.sort(rng.normal(0, 1, (120, 3)), axis=1))
    return PolytomousParams.create("graded", a, d)


def test_scored_lz_looks_standard_normal_for_model_patterns() -> None:
    params = _scored_pool()
    rng = np.random.default_rng(5)
    values = []
    for theta in rng.normal(size=300):
        cumulative = np.cumsum(params.probabilities([theta])[0], axis=1)
        scores = (rng.random((params.n_items, 1)) >= cumulative[:, :-1]).sum(axis=1)
        values.append(lz_scored(scores.astype(float), theta, params))
    v = np.array(values)
    assert abs(v.mean()) < 0.15 and 0.85 < v.std() < 1.15


def test_scored_lz_equals_lz_on_binary_items() -> None:
    binary = random_params(40, np.random.default_rng(6), "2pl")
    as_scored = PolytomousParams.create("2PL", binary.a, (-binary.a * binary.b)[:, None])
    y = (np.random.default_rng(7).random(40) < 0.5).astype(float)
    assert lz_scored(y, 0.3, as_scored) == pytest.approx(lz(y, 0.3, binary), rel=1e-9)


def test_scored_lz_flags_a_reversed_pattern_and_refuses_bad_scores() -> None:
    params = _scored_pool()
    location = -params.d.mean(axis=1) / params.a
    reversed_ = np.where(location > np.median(location), 3.0, 0.0)  # top on hard, 0 on easy
    assert lz_scored(reversed_, 0.0, params) < -5
    with pytest.raises(IRTError, match="whole scores"):
        lz_scored(np.full(params.n_items, 4.0), 0.0, params)
    with pytest.raises(IRTError, match="3 scores for 120 items"):
        lz_scored(np.zeros(3), 0.0, params)
