"""One name table for policies and estimators, shared by the CLI and sessions."""

from __future__ import annotations

import pytest

from cat.assessment.session import SessionConfig
from cat.engine.registry import (
    ESTIMATOR_NAMES,
    POLICY_NAMES,
    EstimatorName,
    PolicyName,
    make_estimator,
    make_policy,
)
from cat.errors import CatError


def test_cli_and_session_offer_exactly_the_known_names() -> None:
    assert {p.value for p in PolicyName} == set(POLICY_NAMES)
    assert {e.value for e in EstimatorName} == set(ESTIMATOR_NAMES)
    for name in POLICY_NAMES:
        SessionConfig(policy=name)  # type: ignore[arg-type]
    for name in ESTIMATOR_NAMES:
        SessionConfig(estimator=name)  # type: ignore[arg-type]


def test_every_name_builds_and_unknown_names_fail() -> None:
    for name in POLICY_NAMES:
        assert hasattr(make_policy(name, 30), "select")
    for name in ESTIMATOR_NAMES:
        assert hasattr(make_estimator(name), "estimate")
    with pytest.raises(CatError, match="unknown policy"):
        make_policy("best", 30)
    with pytest.raises(CatError, match="unknown estimator"):
        make_estimator("guess")


def test_cb_suffix_balances_content_to_the_pool_shares() -> None:
    from cat.engine.constraints import ContentBalanced

    scenario = (0, 0, 0, 1)
    policy = make_policy("mfi+cb", 30, scenario=scenario)
    assert isinstance(policy, ContentBalanced)
    assert policy.targets == (0.75, 0.25)
    with pytest.raises(CatError, match="needs each item's scenario"):
        make_policy("mfi+cb", 30)
    with pytest.raises(CatError, match="unknown policy"):
        make_policy("best+cb", 30, scenario=scenario)
