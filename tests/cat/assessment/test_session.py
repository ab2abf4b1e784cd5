"""The assessment session: asking, recording, stopping, saving and resuming."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.engine.registry import DEFAULT_CONTENT_BALANCING
from cat.engine.selection import PoolInfo
from cat.errors import CatError
from irt.models import probability
from irt.simulate import random_params

PARAMS = random_params(500, np.random.default_rng(0), "3pl")
POOL = PoolInfo.build(PARAMS)
INDEX = {item: j for j, item in enumerate(PARAMS.item_ids)}


def _answer(item: str, theta: float, rng: np.random.Generator) -> int:
    return int(rng.random() < probability([theta], PARAMS)[0, INDEX[item]])


def _run(session: AssessmentSession, theta: float, seed: int, n: int | None = None) -> None:
    rng = np.random.default_rng(seed)
    asked = 0
    while not session.done and (n is None or asked < n):
        for item in session.next_items():
            session.record(item, _answer(item, theta, rng))
            asked += 1


def test_a_session_estimates_and_stops() -> None:
    session = AssessmentSession(PARAMS, SessionConfig(max_items=60, seed=1), pool_info=POOL)
    _run(session, 1.2, seed=2)
    assert session.done and session.stop_reason == "max_length"
    assert len(session.given) == 60 == len(set(session.given))
    assert abs(session.theta - 1.2) < 3 * session.se
    assert len(session.theta_history) == 60


@pytest.mark.parametrize("policy", ["mfi", "kl", "randomesque", "random", "astrat", "proportional"])
def test_resume_equals_uninterrupted(policy: str) -> None:
    config = SessionConfig(policy=policy, max_items=40, seed=7)  # type: ignore[arg-type]
    whole = AssessmentSession(PARAMS, config, pool_info=POOL)
    _run(whole, -0.4, seed=3)

    first = AssessmentSession(PARAMS, config, pool_info=POOL)
    rng = np.random.default_rng(3)
    for _ in range(15):
        for item in first.next_items():
            first.record(item, _answer(item, -0.4, rng))
    saved = first.to_json()
    resumed = AssessmentSession.from_json(saved, PARAMS, pool_info=POOL)
    while not resumed.done:
        for item in resumed.next_items():
            resumed.record(item, _answer(item, -0.4, rng))
    assert resumed.given == whole.given
    assert resumed.responses == whole.responses
    assert resumed.theta == pytest.approx(whole.theta, abs=1e-12)


def test_batches_skips_and_errors() -> None:
    session = AssessmentSession(PARAMS, SessionConfig(max_items=12, seed=4), pool_info=POOL)
    batch = session.next_items(5)
    assert len(batch) == 5 == len(set(batch))
    assert session.next_items(5) == batch  # the same items until they are answered
    with pytest.raises(CatError, match="answer the items"):
        session.to_json()
    session.record(batch[0], None)  # cannot answer: skipped, never asked again
    for item in batch[1:]:
        session.record(item, 1)
    assert len(session.theta_history) == 1  # one estimate per batch
    with pytest.raises(CatError, match="not asked"):
        session.record(batch[1], 0)
    with pytest.raises(CatError, match="1, 0 or None"):
        session.record(session.next_items()[0], 2)  # type: ignore[arg-type]
    while not session.done:
        for item in session.next_items(4):
            session.record(item, 0)
    assert batch[0] not in session.given and batch[0] in session.skipped
    assert len(session.given) == 12


def test_se_target_stops_early_and_is_recorded() -> None:
    config = SessionConfig(max_items=200, se_target=0.35, min_items=10, seed=5)
    session = AssessmentSession(PARAMS, config, pool_info=POOL)
    _run(session, 0.0, seed=6)
    assert session.stop_reason == "se_target"
    assert 10 <= len(session.given) < 200 and session.se <= 0.35


def test_saved_session_is_checked() -> None:
    session = AssessmentSession(PARAMS, SessionConfig(max_items=5), pool_info=POOL)
    _run(session, 0.0, seed=1)
    text = session.to_json()
    data = json.loads(text)
    assert data["config"]["seed"] == 0 and len(data["given"]) == 5
    with pytest.raises(CatError, match="pool of 500"):
        AssessmentSession.from_json(text, random_params(10, np.random.default_rng(1)))
    with pytest.raises(CatError, match="not a saved session"):
        AssessmentSession.from_json('{"format": 1}', PARAMS)
    with pytest.raises(CatError, match="not a saved session"):
        AssessmentSession.from_json("{nope", PARAMS)


def test_content_balancing_applies_where_the_scenarios_are_given() -> None:
    # On by default, as in cat.assess; without scenarios there is nothing to balance.
    assert SessionConfig().content_balancing is DEFAULT_CONTENT_BALANCING is True
    asked = []
    for balancing in (True, False):
        config = SessionConfig(content_balancing=balancing, max_items=20, seed=8)
        plain = AssessmentSession(PARAMS, config, pool_info=POOL)
        _run(plain, 0.5, seed=8)
        asked.append(plain.given)
    assert asked[0] == asked[1]
    scenario = tuple(j % 3 for j in range(500))
    session = AssessmentSession(
        PARAMS, SessionConfig(content_balancing=True, max_items=30), scenario, POOL
    )
    _run(session, 0.5, seed=8)
    counts = np.bincount([scenario[INDEX[i]] for i in session.given], minlength=3)
    assert counts.tolist() == [10, 10, 10]


def test_content_targets_follow_the_pool_or_are_equal() -> None:
    scenario = tuple(0 if j < 400 else 1 for j in range(500))  # shares 0.8 / 0.2
    counts = {}
    for targets in ("pool", "equal"):
        config = SessionConfig(content_balancing=True, content_targets=targets, max_items=30)
        session = AssessmentSession(PARAMS, config, scenario, POOL)
        _run(session, 0.0, seed=9)
        counts[targets] = np.bincount([scenario[INDEX[i]] for i in session.given]).tolist()
    assert counts == {"pool": [24, 6], "equal": [15, 15]}


def test_audit_items_are_asked_and_each_items_chance_is_kept_across_a_resume() -> None:
    config = SessionConfig(max_items=60, seed=2)
    whole = AssessmentSession(PARAMS, config, pool_info=POOL)
    _run(whole, 0.3, seed=4)
    plain = AssessmentSession(
        PARAMS, config.model_copy(update={"audit_every": None}), pool_info=POOL
    )
    _run(plain, 0.3, seed=4)
    # The same first 34 items; the 35th is an easy audit: a chance of at least 0.9.
    assert whole.given[:34] == plain.given[:34] and whole.given[34] != plain.given[34]
    assert whole.chances[34] >= 0.9 and whole.chances[39] <= 0.15
    assert len(whole.chances) == 60 and all(0 < c < 1 for c in whole.chances)
    assert whole.chances[0] == pytest.approx(
        float(probability([0.0], PARAMS)[0, INDEX[whole.given[0]]])
    )
    first = AssessmentSession(PARAMS, config, pool_info=POOL)
    _run(first, 0.3, seed=4, n=37)
    resumed = AssessmentSession.from_json(first.to_json(), PARAMS, pool_info=POOL)
    assert resumed.chances == first.chances


def test_a_session_saved_before_audits_goes_on_without_them() -> None:
    config = SessionConfig(max_items=60, seed=2, audit_every=None)
    session = AssessmentSession(PARAMS, config, pool_info=POOL)
    _run(session, 0.3, seed=4, n=20)
    saved = json.loads(session.to_json())
    del saved["config"]["audit_every"], saved["chances"]  # as written before them
    resumed = AssessmentSession.from_json(json.dumps(saved), PARAMS, pool_info=POOL)
    assert resumed.config.audit_every is None
    assert len(resumed.chances) == 20 and all(np.isnan(resumed.chances))
